"""The version, kept in one place (pyproject.toml reads it). A ``.devN`` suffix marks numbers
computed between releases: CHANGELOG.md's "Unreleased" section lists what changed since."""

__version__ = "0.2.0.dev0"
