"""The report card of a Spark DataFrame (PySpark in local mode, through ibis) equals the pandas
path on the same rows. One SparkSession for the module, a small log, two shuffle partitions."""

import shutil
import warnings

import numpy as np
import pandas as pd
import pytest

import judgekit as jk

pytest.importorskip("ibis", reason="the Spark tests need the [spark] extra")
pytest.importorskip("pyspark", reason="the Spark tests need the [spark] extra")
if shutil.which("java") is None:
    pytest.skip("Spark needs Java (Debian's default-jre-headless; .ci/run installs it)",
                allow_module_level=True)


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[1]").appName("judgekit-tests")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.default.parallelism", "1")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.driver.memory", "1g")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def test_report_card_on_spark_equals_the_pandas_path(spark, tmp_path):
    pairs, j0, _ = jk.sim.simulate_judgments(60, accuracy=0.8, position_bias=0.5, flip_q=0.1,
                                         tie_rate=0.1, repeats=2, judge_name="alpha", seed=0)
    _, j1, _ = jk.sim.simulate_judgments(pairs, accuracy=0.7, position_bias=-0.4, flip_q=0.2,
                                     repeats=2, judge_name="beta", seed=1)
    j = pd.concat([j0, j1], ignore_index=True).sample(frac=1.0, random_state=0)
    j = j.reset_index(drop=True)
    j.loc[np.random.default_rng(0).random(len(j)) < 0.03, "verdict"] = None
    j["row"] = np.arange(len(j))
    j.to_parquet(tmp_path / "log.parquet", index=False)
    df = spark.read.parquet(str(tmp_path / "log.parquet"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # with the row order named, the numbers are those of the frame as it is (without
        # it the pairs are bootstrapped in pair_id order: tests/scale/test_scale_duckdb.py)
        ours = jk.report_card(jk.scan_table(df, order="row", progress=False), pairs, n_boot=100)
        ref = jk.report_card(j.drop(columns="row"), pairs, n_boot=100)
    pd.testing.assert_frame_equal(ours, ref, rtol=1e-9, atol=1e-12)
    assert ref["acc_both_ci_low"].notna().all()
