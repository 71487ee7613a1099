"""The simulated OpenAI-compatible judge server.

:class:`SimServer` answers chat completions (with logprobs), files and batches over real HTTP on a
loopback port, as a :class:`~judgekit.data.simulate.SimJudge` whose biases are known would. It can
inject faults (:class:`Faults`) and enforce sliding-window request and token rate limits, and it
counts every call. ``judgekit serve-sim`` runs it from the shell (:func:`serve_forever`).

Modules: :mod:`~judgekit.sim.server` (configuration, lifecycle, the chat route),
:mod:`~judgekit.sim.chat` (decoding, deciding, answering), :mod:`~judgekit.sim.faults`,
:mod:`~judgekit.sim.ratelimit`, :mod:`~judgekit.sim.replay`, :mod:`~judgekit.sim.batches`
(Files and Batches API), :mod:`~judgekit.sim.config` (config files and the command line).
"""

from judgekit.sim.config import serve_forever, server_from_config
from judgekit.sim.faults import Faults
from judgekit.sim.ratelimit import RateLimiter
from judgekit.sim.server import SimServer

__all__ = ["Faults", "RateLimiter", "SimServer", "serve_forever", "server_from_config"]
