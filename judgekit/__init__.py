"""judgekit: can you trust your LLM judge?

One flat namespace over the two tidy tables described in :mod:`judgekit.schema`::

    import judgekit as jk
    pairs, judgments, truth = jk.simulate_judgments(1000, position_bias=0.5, repeats=5)
    jk.report_card(judgments, pairs)

Importing judgekit does no I/O and reads no environment variable.
"""

from judgekit import calibration as _calibration
from judgekit import data as _data
from judgekit import inference as _inference
from judgekit import judging as _judging
from judgekit import metrics as _metrics
from judgekit import perturb as _perturb
from judgekit import schema as _schema
from judgekit import scoreboard, viz
from judgekit import winrate as _winrate
from judgekit._env import smoke
from judgekit._version import __version__
from judgekit.audit import Audit, audit
from judgekit.calibration import *  # noqa: F403
from judgekit.data import *  # noqa: F403
from judgekit.inference import *  # noqa: F403
from judgekit.judging import *  # noqa: F403
from judgekit.metrics import *  # noqa: F403
from judgekit.perturb import *  # noqa: F403
from judgekit.published import published
from judgekit.schema import *  # noqa: F403
from judgekit.winrate import *  # noqa: F403

__all__ = ["Audit", "__version__", "audit", "published", "scoreboard", "smoke", "viz"]
for _module in (_schema, _data, _judging, _metrics, _calibration, _winrate, _perturb, _inference):
    __all__ += list(_module.__all__)
del _module
