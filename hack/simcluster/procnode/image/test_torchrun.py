"""Tests of the process nodes' torchrun (torchrun in this directory) with
Debian's torch 1.13: the keep-alive keys of the rendezvous configuration
decide how soon a node that stopped is dropped."""

import importlib.machinery
import importlib.util
import os
import threading
import time
import unittest
from datetime import timedelta

import torch.distributed as dist
from torch.distributed.elastic.rendezvous import registry
from torch.distributed.elastic.rendezvous.api import RendezvousParameters
from torch.distributed.elastic.rendezvous.c10d_rendezvous_backend import C10dRendezvousBackend


def load_shim():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torchrun")
    loader = importlib.machinery.SourceFileLoader("procnode_torchrun", path)
    spec = importlib.util.spec_from_loader(loader.name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


SHIM = load_shim()
SHIM.install()


def handler(store, run_id, **conf):
    params = RendezvousParameters(
        backend="c10d", endpoint="", run_id=run_id, min_nodes=2, max_nodes=2, **conf
    )
    return registry.create_handler(store, C10dRendezvousBackend(store, run_id), params)


class KeepAliveTest(unittest.TestCase):
    def test_keys_set_the_keep_alive(self):
        h = handler(dist.HashStore(), "keys", keep_alive_interval=1, keep_alive_max_attempt=2, heartbeat_timeout=4)
        self.assertEqual(h.settings.keep_alive_interval, timedelta(seconds=1))
        self.assertEqual(h.settings.keep_alive_max_attempt, 2)
        self.assertEqual(h.settings.timeout.heartbeat, timedelta(seconds=4))
        # The state holder drops dead nodes by its own copy of the settings.
        self.assertIs(h._state_holder._settings, h.settings)

    def test_the_other_timeouts_are_kept(self):
        h = handler(dist.HashStore(), "kept", keep_alive_interval=1, last_call_timeout=1, join_timeout=7)
        self.assertEqual(h.settings.timeout.last_call, timedelta(seconds=1))
        self.assertEqual(h.settings.timeout.join, timedelta(seconds=7))
        self.assertEqual(h.settings.keep_alive_max_attempt, 3)

    def test_without_keys_torch_defaults(self):
        h = handler(dist.HashStore(), "defaults", last_call_timeout=1)
        self.assertEqual(h.settings.keep_alive_interval, timedelta(seconds=5))
        self.assertEqual(h.settings.keep_alive_max_attempt, 3)

    def test_a_bad_value_names_the_key(self):
        with self.assertRaisesRegex(ValueError, "keep_alive_max_attempt=0"):
            handler(dist.HashStore(), "bad", keep_alive_max_attempt=0)

    def test_a_node_that_stops_is_dropped_after_interval_times_attempts(self):
        # Two nodes form a round; one stops its heartbeats, as a node whose
        # processes were killed does. With 1 s x 2 the other drops it within
        # seconds; torch 1.13 alone would keep it for 15 s.
        store = dist.HashStore()
        a = handler(store, "drop", keep_alive_interval=1, keep_alive_max_attempt=2, last_call_timeout=1)
        b = handler(store, "drop", keep_alive_interval=1, keep_alive_max_attempt=2, last_call_timeout=1)
        joined = []
        threads = [threading.Thread(target=lambda h=h: joined.append(h.next_rendezvous())) for h in (a, b)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        self.assertEqual(len(joined), 2, "the two nodes did not form a round")
        try:
            b._stop_heartbeats()
            stopped = time.monotonic()
            while True:
                a._state_holder.sync()
                if b._this_node not in a._state_holder.state.participants:
                    break
                self.assertLess(time.monotonic() - stopped, 12, "the stopped node is still a participant after 12 s")
                time.sleep(0.2)
        finally:
            a._stop_heartbeats()
            b._stop_heartbeats()


if __name__ == "__main__":
    unittest.main()
