"""Helpers and fixture modules shared by the tests: servers, services, browser, hostile inputs."""
