"""Choices of the tenancy app; IBTA enums keep the codes OpenSM uses and show human units."""

from django.db import models

from fabric_engine.formats.opensm_partitions import RATE_GBPS


class Membership(models.TextChoices):
    """Partition membership of a port; limited members cannot talk to other limited members."""

    FULL = "full", "Full"
    LIMITED = "limited", "Limited"
    BOTH = "both", "Both (full and limited P_Key)"


class Mtu(models.IntegerChoices):
    """IBTA MTU codes (``mtu=4`` in partitions.conf is 2048 bytes; ``opensm_partitions.MTU_BYTES`` maps them)."""

    MTU_256 = 1, "256 bytes"
    MTU_512 = 2, "512 bytes"
    MTU_1024 = 3, "1024 bytes"
    MTU_2048 = 4, "2048 bytes"
    MTU_4096 = 5, "4096 bytes"


class Rate(models.IntegerChoices):
    """IBTA rate codes (``rate=21`` in partitions.conf is 400 Gb/s); see ``RATE_GBPS``."""

    GBPS_2_5 = 2, "2.5 Gb/s"
    GBPS_5 = 5, "5 Gb/s"
    GBPS_10 = 3, "10 Gb/s"
    GBPS_14 = 11, "14 Gb/s"
    GBPS_20 = 6, "20 Gb/s"
    GBPS_25 = 15, "25 Gb/s"
    GBPS_28 = 19, "28 Gb/s"
    GBPS_30 = 4, "30 Gb/s"
    GBPS_40 = 7, "40 Gb/s"
    GBPS_50 = 20, "50 Gb/s"
    GBPS_56 = 12, "56 Gb/s"
    GBPS_60 = 8, "60 Gb/s"
    GBPS_80 = 9, "80 Gb/s"
    GBPS_100 = 16, "100 Gb/s"
    GBPS_112 = 13, "112 Gb/s"
    GBPS_120 = 10, "120 Gb/s"
    GBPS_168 = 14, "168 Gb/s"
    GBPS_200 = 17, "200 Gb/s"
    GBPS_300 = 18, "300 Gb/s"
    GBPS_400 = 21, "400 Gb/s"
    GBPS_600 = 22, "600 Gb/s"


def rate_gbps(code: int | None) -> float | None:
    return None if code is None else RATE_GBPS[code]


class AuditAction(models.TextChoices):
    CREATE = "create", "Created"
    UPDATE = "update", "Updated"
    DELETE = "delete", "Deleted"
    IMPORT = "import", "Imported"


#: Group names of the three roles (created by migration 0003).
ROLE_VIEWER = "viewer"
ROLE_OPERATOR = "operator"
ROLE_POLICY_ADMIN = "policy admin"
