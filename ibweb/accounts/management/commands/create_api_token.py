"""``manage.py create_api_token USER [--name NAME]``: issue an API token; its key is printed once."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from ibweb.accounts.models import ApiToken


class Command(BaseCommand):
    help = "Issue an API token of USER (Authorization: Token <key>); the key is printed once, only its hash is kept."

    def add_arguments(self, parser) -> None:
        parser.add_argument("username")
        parser.add_argument("--name", default="api", help="what the token is for (shown in the admin)")

    def handle(self, username: str, name: str, **options) -> None:
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"username: no user {username!r}")
        if not name.strip() or len(name) > 100:
            raise CommandError("--name: 1 to 100 characters")
        _, key = ApiToken.issue(user, name.strip())
        self.stdout.write(key)
