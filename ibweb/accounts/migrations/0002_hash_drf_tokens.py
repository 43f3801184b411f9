"""Hash the keys of DRF's ``authtoken`` tokens into API tokens and delete the clear keys (issue 26).

A database that had ``rest_framework.authtoken`` keeps its ``authtoken_token`` table; each row
becomes an :class:`~ibweb.accounts.models.ApiToken` of the same user (same key: it keeps working),
then the row is deleted. A database that never had the table has nothing to do.
"""

import hashlib

from datetime import UTC

from django.db import migrations
from django.utils import timezone
from django.utils.dateparse import parse_datetime

LEGACY_TABLE = "authtoken_token"


def hash_legacy_tokens(apps, schema_editor) -> None:
    connection = schema_editor.connection
    if LEGACY_TABLE not in connection.introspection.table_names():
        return
    ApiToken = apps.get_model("accounts", "ApiToken")
    table = schema_editor.quote_name(LEGACY_TABLE)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {schema_editor.quote_name('key')}, user_id, created FROM {table}")
        rows = cursor.fetchall()
    for key, user_id, created in rows:
        token = ApiToken.objects.create(user_id=user_id, name="migrated", prefix=key[:8],
                                        digest=hashlib.sha256(key.encode()).hexdigest())
        if isinstance(created, str):
            created = parse_datetime(created)
        if created is not None:
            ApiToken.objects.filter(pk=token.pk).update(
                created=timezone.make_aware(created, UTC) if timezone.is_naive(created) else created)
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {table}")


class Migration(migrations.Migration):
    dependencies = [("accounts", "0001_initial")]

    operations = [migrations.RunPython(hash_legacy_tokens, migrations.RunPython.noop)]
