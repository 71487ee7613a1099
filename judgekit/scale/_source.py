"""Where a large judgments table lives: a parquet file or folder, an ibis table, or a Spark
DataFrame, wrapped as a :class:`ScannedTable` that the metrics accept in place of a frame."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from typing import Any

import pandas as pd

ROW = "_jk_row"  # the row-order column added to parquet sources (file index, row in file)
_FILE_SHIFT = 1 << 40  # rows per file below this; the file's index above it


def _ibis() -> Any:
    try:
        import ibis
    except ModuleNotFoundError as err:  # pragma: no cover - depends on the install
        raise ModuleNotFoundError(
            "scan_table needs ibis: pip install 'llm-judgekit[duckdb]' (or '[spark]' for Spark)"
        ) from err
    return ibis


@dataclass
class ScannedTable:
    """A table read where it lives (DuckDB, Spark or any ibis backend), not loaded into memory.

    Made by :func:`scan_table`. The metrics that accept one (:func:`report_card`, the tidy
    reliability metrics, :func:`win_rates`, the PPI estimators) ask the engine for one row per
    (judge, pair) cell and never for the judgments themselves.

    Attributes
    ----------
    expr : ibis.Table
        The table as an ibis expression.
    order : str or None
        A column giving the row order (pairs are bootstrapped in order of first appearance, as
        in a frame); None when the source has none, and then pairs are taken in ``pair_id`` order.
    name : str
        What error messages call the table.
    progress : bool
        Show a progress bar while the engine works.
    """

    expr: Any
    order: str | None = None
    name: str = "judgments"
    progress: bool = True

    @property
    def columns(self) -> list[str]:
        return [c for c in self.expr.columns if c != ROW]

    def to_pandas(self) -> pd.DataFrame:
        """The whole table as a frame (for small tables such as pairs), in row order."""
        expr = self.expr.order_by(self.order) if self.order is not None else self.expr
        frame = expr.to_pandas()
        return frame.drop(columns=[ROW], errors="ignore").reset_index(drop=True)

    def count(self) -> int:
        return int(self.expr.count().execute())

    # The reductions the analyses ask a scanned table for. They are methods so that the analyses
    # (metrics, win rates, PPI, calibration), which sit below this engine layer, call them on the
    # table they were given without importing judgekit.scale.

    def prepare_cells(self, pairs: Any, by: list[str], options: Any, *, splits: Any = None,
                      seed: int = 0) -> Any:
        """The metrics' dense cells (:func:`judgekit.scale._prepare.prepare_scanned`)."""
        from judgekit.scale._prepare import prepare_scanned

        return prepare_scanned(self, pairs, by, options, splits=splits, seed=seed)

    def winrate_orders(self, pairs: pd.DataFrame, model_is_a: Any, preference: Any) -> Any:
        """Per-(judge, pair, order) win-rate sums (:func:`judgekit.scale._tables.winrate_orders`)."""
        from judgekit.scale._tables import winrate_orders

        return winrate_orders(self, pairs, model_is_a, preference)

    def ppi_cells(self, target: str, prediction: str) -> pd.DataFrame:
        """Per-(judge, pair, order, id_swap) prediction sums (:func:`judgekit.scale._tables.ppi_cells`)."""
        from judgekit.scale._tables import ppi_cells

        return ppi_cells(self, target, prediction)

    def arrangement_cells(self, prob: str) -> pd.DataFrame:
        """Per-(judge, pair, arrangement) P(t1) sums (:func:`judgekit.scale._tables.arrangement_cells`)."""
        from judgekit.scale._tables import arrangement_cells

        return arrangement_cells(self, prob)


def _parquet_files(con: Any, source: str) -> list[str]:
    """The parquet files of a file, folder or glob, in name order (the order pandas reads)."""
    if os.path.isdir(source):
        pattern = os.path.join(source, "**", "*.parquet")
    else:
        pattern = source
    if any(ch in pattern for ch in "*?["):
        files = [r[0] for r in con.raw_sql(f"SELECT file FROM glob('{_quote(pattern)}')").fetchall()]
        if not files:
            raise FileNotFoundError(f"scan_table: no parquet files match {source!r}")
        return sorted(files)
    if "://" not in source and not os.path.exists(source):
        raise FileNotFoundError(f"scan_table: {source!r} does not exist")
    return [source]


def _quote(text: str) -> str:
    return text.replace("'", "''")


def duckdb_connection(memory_limit: str | None = "2GB", temp_directory: str | None = None,
                      threads: int | None = None, progress: bool = False) -> Any:
    """An ibis DuckDB connection that spills to disk beyond ``memory_limit`` (and shows DuckDB's
    own progress bar for long queries when ``progress``)."""
    ibis = _ibis()
    con = ibis.duckdb.connect()
    if memory_limit is not None:
        con.raw_sql(f"SET memory_limit = '{_quote(str(memory_limit))}'")
    tmp = temp_directory or os.path.join(tempfile.gettempdir(), "judgekit-duckdb")
    con.raw_sql(f"SET temp_directory = '{_quote(tmp)}'")
    con.raw_sql("SET preserve_insertion_order = false")
    if threads is not None:
        con.raw_sql(f"SET threads = {int(threads)}")
    con.raw_sql(f"SET enable_progress_bar = {'true' if progress else 'false'}")
    return con


def scan_table(
    source: Any,
    *,
    order: str | None = None,
    con: Any = None,
    memory_limit: str | None = "2GB",
    name: str = "judgments",
    progress: bool = True,
) -> ScannedTable:
    """Point judgekit at a judgments (or pairs) table too large for memory.

    Parameters
    ----------
    source : str, ibis.Table or pyspark.sql.DataFrame
        A parquet file, a folder of parquet files, a glob, or an object-store URL DuckDB can read
        (``s3://``, ``gs://``, ``https://``; load DuckDB's ``httpfs`` in ``con`` first); an ibis
        table on any backend (a DuckDB file, a warehouse); or a Spark DataFrame.
    order : str, optional
        A column holding the row order. Parquet sources get one (the file's place among the
        files in name order, then the row in the file), so their numbers equal those of
        ``pandas.read_parquet`` of the same files. Without one, the bootstrap takes the pairs
        in ``pair_id`` order: estimates are unchanged, intervals equal those of the frame
        sorted by ``pair_id``.
    con : ibis connection, optional
        The DuckDB connection to read parquet with (default: a new in-memory one, spilling
        to the temporary directory beyond ``memory_limit``).
    memory_limit : str or None
        DuckDB's memory limit when ``con`` is not given (default "2GB").
    name : str
        What error messages call the table.
    progress : bool
        Show progress while the engine works: DuckDB's own progress bar for long queries (on
        the connection made here; Spark shows its stages itself), then a bar counting the cells
        as they arrive.

    Returns
    -------
    ScannedTable

    Notes
    -----
    Requires ``pip install "llm-judgekit[duckdb]"`` (ibis with DuckDB) or ``[spark]``. The
    engine reduces the judgments to one row per (judge, pair) cell; memory is proportional to
    the cells, not the judgments. See ``docs/large_logs.md``.

    Examples
    --------
    >>> import tempfile, os, judgekit as jk
    >>> pairs, judgments, _ = jk.sim.simulate_judgments(200, accuracy=0.8, repeats=2, seed=0)
    >>> path = os.path.join(tempfile.mkdtemp(), "judgments.parquet")
    >>> judgments.to_parquet(path)
    >>> card = jk.report_card(jk.scan_table(path, progress=False), pairs, n_boot=100)
    >>> card.equals(jk.report_card(judgments, pairs, n_boot=100))
    True
    """
    ibis = _ibis()
    if isinstance(source, ScannedTable):
        return source
    if isinstance(source, (str, os.PathLike)):
        source = os.fspath(source)
        con = con if con is not None else duckdb_connection(memory_limit, progress=progress)
        files = _parquet_files(con, source)
        listed = ", ".join(f"'{_quote(f)}'" for f in files)
        query = (
            f"SELECT * EXCLUDE (filename, file_row_number), "
            f"(list_position([{listed}], filename) - 1) * {_FILE_SHIFT} + file_row_number "
            f"AS {ROW} FROM read_parquet([{listed}], filename = true, file_row_number = true)"
        )
        expr = con.sql(query)
        return ScannedTable(expr, order=order or ROW, name=name, progress=progress)
    if isinstance(source, ibis.expr.types.Table):
        return ScannedTable(source, order=order, name=name, progress=progress)
    if type(source).__module__.startswith("pyspark.sql"):
        session = source.sparkSession
        spark_con = con if con is not None else ibis.pyspark.connect(session)
        view = f"judgekit_scan_{id(source):x}"
        source.createOrReplaceTempView(view)
        return ScannedTable(spark_con.table(view), order=order, name=name, progress=progress)
    raise TypeError(
        "scan_table: source must be a parquet path or URL, an ibis table or a Spark DataFrame; "
        f"got {type(source).__name__}"
    )
