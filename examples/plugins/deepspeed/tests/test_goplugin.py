import base64
import grp
import io
import json
import logging
import os
import stat
import subprocess
import sys
import tempfile
import time
import unittest

import grpc
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.x509.oid import ExtendedKeyUsageOID

import goplugin
from tests import PLUGIN_DIR
from trainforge.plugin.v1 import plugin_pb2 as pb
from trainforge.plugin.v1 import plugin_pb2_grpc as pb_grpc

PLUGIN = os.path.join(PLUGIN_DIR, "plugin.py")


class HandshakeTest(unittest.TestCase):
    def test_negotiates_the_highest_common_version(self):
        self.assertEqual(goplugin.negotiate({"PLUGIN_PROTOCOL_VERSIONS": "1"}), 1)
        self.assertEqual(goplugin.negotiate({"PLUGIN_PROTOCOL_VERSIONS": "3,1,2"}), 1)
        self.assertEqual(goplugin.negotiate({}), 1)
        with self.assertRaisesRegex(goplugin.StartError, "the host speaks plugin protocol versions 2,3, this plugin speaks 1"):
            goplugin.negotiate({"PLUGIN_PROTOCOL_VERSIONS": "2,3"})

    def test_the_certificate_is_for_localhost_and_unpadded(self):
        cert_pem, der, _ = goplugin.server_certificate()
        line = goplugin.handshake_line(1, "/tmp/s/plugin1", der)
        core, version, network, address, protocol, encoded = line.split("|")
        self.assertEqual((core, version, network, address, protocol), ("1", "1", "unix", "/tmp/s/plugin1", "grpc"))
        self.assertNotIn("=", encoded, "go-plugin decodes with base64.RawStdEncoding")
        cert = x509.load_der_x509_certificate(base64.b64decode(encoded + "=" * (-len(encoded) % 4)))
        self.assertEqual(cert, x509.load_pem_x509_certificate(cert_pem))
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        self.assertEqual(san.get_values_for_type(x509.DNSName), ["localhost"])
        eku = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
        self.assertIn(ExtendedKeyUsageOID.SERVER_AUTH, eku)

    def test_a_socket_group_gets_the_socket(self):
        fd, path = tempfile.mkstemp()
        os.close(fd)
        self.addCleanup(os.remove, path)
        os.chmod(path, 0o600)
        gid = os.getgid()
        goplugin.share_socket(path, str(gid))
        st = os.stat(path)
        self.assertEqual((st.st_gid, stat.S_IMODE(st.st_mode)), (gid, 0o660))
        goplugin.share_socket(path, grp.getgrgid(gid).gr_name)
        self.assertEqual(os.stat(path).st_gid, gid)

    def test_logs_are_json_lines_with_level_and_message(self):
        out = io.StringIO()
        handler = logging.StreamHandler(out)
        handler.setFormatter(goplugin.JSONLines())
        logger = logging.getLogger("test-json-lines")
        logger.addHandler(handler)
        logger.propagate = False
        logger.warning("slow call", extra={"fields": {"point": "Build", "ms": 12}})
        entry = json.loads(out.getvalue())
        self.assertEqual({k: entry[k] for k in ("@level", "@message", "@module", "point", "ms")},
                         {"@level": "warn", "@message": "slow call", "@module": "test-json-lines", "point": "Build", "ms": 12})


class ServeTest(unittest.TestCase):
    """Runs plugin.py as the host does and talks to it over mutual TLS."""

    def start(self, env=None, argv=None):
        cert_pem, _, key_pem = goplugin.server_certificate()
        self.client_cert, self.client_key = cert_pem, key_pem
        full_env = dict(os.environ, TRAINFORGE_PLUGIN=goplugin.COOKIE_VALUE, PLUGIN_PROTOCOL_VERSIONS="1",
                        PLUGIN_CLIENT_CERT=cert_pem.decode())
        full_env.update(env or {})
        proc = subprocess.Popen(argv or [sys.executable, PLUGIN], env=full_env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: (proc.kill(), proc.wait()))
        self.addCleanup(proc.stderr.close)
        self.addCleanup(proc.stdout.close)
        return proc

    def channel(self, line, with_client_cert=True):
        _, _, _, address, _, encoded = line.strip().split("|")
        der = base64.b64decode(encoded + "=" * (-len(encoded) % 4))
        server_pem = x509.load_der_x509_certificate(der).public_bytes(serialization.Encoding.PEM)
        creds = grpc.ssl_channel_credentials(
            root_certificates=server_pem,
            private_key=self.client_key if with_client_cert else None,
            certificate_chain=self.client_cert if with_client_cert else None)
        ch = grpc.secure_channel(f"unix:{address}", creds, options=[("grpc.ssl_target_name_override", "localhost")])
        self.addCleanup(ch.close)
        return ch

    def test_serves_describe_and_health_and_shuts_down(self):
        proc = self.start()
        line = proc.stdout.readline()
        self.assertTrue(line.startswith("1|1|unix|"), line)
        ch = self.channel(line)
        desc = pb_grpc.PluginServiceStub(ch).Describe(pb.DescribeRequest(), timeout=5)
        self.assertEqual((desc.name, list(desc.ml_policy_keys)), ("DeepSpeed", ["deepspeed"]))
        health = ch.unary_unary("/grpc.health.v1.Health/Check",
                                request_serializer=goplugin.HealthCheckRequest.SerializeToString,
                                response_deserializer=goplugin.HealthCheckResponse.FromString)
        self.assertEqual(health(goplugin.HealthCheckRequest(service="plugin"), timeout=5).status, goplugin.SERVING)
        with self.assertRaises(grpc.RpcError) as e:
            pb_grpc.PluginServiceStub(ch).Status(pb.StatusRequest(), timeout=5)
        self.assertEqual(e.exception.code(), grpc.StatusCode.UNIMPLEMENTED)
        with self.assertRaises(grpc.RpcError) as e:
            pb_grpc.PluginServiceStub(ch).EnforceMLPolicy(pb.EnforceMLPolicyRequest(info=b"{"), timeout=5)
        self.assertEqual(e.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)

        shutdown = ch.unary_unary("/plugin.GRPCController/Shutdown", request_serializer=lambda b: b, response_deserializer=lambda b: b)
        shutdown(b"", timeout=5)
        self.assertEqual(proc.wait(timeout=10), 0)
        self.assertEqual(proc.stdout.read(), "", "nothing on stdout but the handshake line")
        for entry in proc.stderr.read().splitlines():
            self.assertIn("@level", json.loads(entry), entry)

    def test_refuses_a_client_without_the_hosts_certificate(self):
        proc = self.start()
        ch = self.channel(proc.stdout.readline(), with_client_cert=False)
        with self.assertRaises(grpc.RpcError) as e:
            pb_grpc.PluginServiceStub(ch).Describe(pb.DescribeRequest(), timeout=5)
        self.assertEqual(e.exception.code(), grpc.StatusCode.UNAVAILABLE)

    def test_exits_when_the_host_is_gone(self):
        # The shell starts the plugin and exits at once: the plugin is
        # re-parented, as when the host dies without killing it.
        proc = self.start(argv=["/bin/sh", "-c", f'"{sys.executable}" "{PLUGIN}" & echo "pid $!"; sleep 1'])
        pid = int(proc.stdout.readline().split()[1])
        self.addCleanup(kill, pid)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and alive(pid):
            time.sleep(0.1)
        self.assertFalse(alive(pid), "the plugin outlived its host")

    def test_says_what_it_is_without_the_cookie(self):
        proc = self.start(env={"TRAINFORGE_PLUGIN": ""})
        self.assertEqual(proc.wait(timeout=10), 1)
        self.assertIn("This is a Trainforge plugin, DeepSpeed", proc.stderr.read())
        self.assertEqual(proc.stdout.read(), "")

    def test_refuses_another_protocol(self):
        proc = self.start(env={"PLUGIN_PROTOCOL_VERSIONS": "2"})
        self.assertEqual(proc.wait(timeout=10), 1)
        self.assertIn("this plugin speaks 1", json.loads(proc.stderr.read().splitlines()[-1])["@message"])


def kill(pid):
    try:
        os.kill(pid, 9)
    except ProcessLookupError:
        pass


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


if __name__ == "__main__":
    unittest.main()
