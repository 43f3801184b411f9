"""Build of the compiled parts of fabric_engine (the rest of the metadata is in pyproject.toml)."""

from setuptools import Extension, setup

setup(ext_modules=[
    Extension("fabric_engine._maxmin", ["fabric_engine/_maxmin.c"], extra_compile_args=["-O2"]),
    Extension("fabric_engine._credit", ["fabric_engine/_credit.c"], extra_compile_args=["-O2"]),
    Extension("fabric_engine.routing._lidgreedy", ["fabric_engine/routing/_lidgreedy.c"], extra_compile_args=["-O2"]),
    Extension("fabric_engine.telemetry._perfquery", ["fabric_engine/telemetry/_perfquery.c"],
              extra_compile_args=["-O2"]),
])
