from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """API tokens of user accounts (scripts, Prometheus scrapers): stored hashed, the key shown once."""

    name = "ibweb.accounts"
    label = "accounts"
    verbose_name = "Accounts"
