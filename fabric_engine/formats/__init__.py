"""Readers and writers of fabric file formats."""
