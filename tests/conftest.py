"""Shared by the test folders, which mirror the packages: pytest puts this folder on sys.path,
so the helpers beside it (``_hostile``, ``_rawserver``, ``_formats``, ``_mirror``) import by name
from any folder."""
