"""Tenants of the cluster; partitions and QoS build on them."""

from django.db import models


class Tenant(models.Model):
    """An organisation or team whose jobs share the fabric."""

    name = models.CharField(max_length=100, unique=True)
    slug = models.SlugField(max_length=100, unique=True)
    description = models.TextField(blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name
