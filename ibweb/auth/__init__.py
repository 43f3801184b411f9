"""Who is calling and what they may do: bearer tokens, refused schemes, sign-in throttles, the API's and pages'
permission checks, the admin's scoping and the roles' grants (what each user sees is decided in :mod:`ibweb.access`)."""
