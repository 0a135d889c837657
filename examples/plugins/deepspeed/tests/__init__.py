"""Unit tests of the DeepSpeed plugin; run them with Debian's interpreter:

    /usr/bin/python3 -m unittest discover -s examples/plugins/deepspeed/tests -t examples/plugins/deepspeed

(`make test-python`). The plugin's behaviour through the real host is
tested from Go: golden_test.go, trainforge-plugin-conformance and the
integration suite.
"""

import os
import sys

PLUGIN_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [PLUGIN_DIR, os.path.join(PLUGIN_DIR, "gen")]
