"""The hashicorp/go-plugin side of a Trainforge plugin, in Python.

The Go SDK gets all of this from go-plugin; a plugin in another language
does it itself. The steps, in order, are those of serve():

 1. The handshake cookie TRAINFORGE_PLUGIN must have the Trainforge value;
    without it the program was not started by a Trainforge host.
 2. The protocol version is the highest of PLUGIN_PROTOCOL_VERSIONS (comma
    separated) that the plugin speaks.
 3. The host's certificate, PLUGIN_CLIENT_CERT (PEM), is the only CA the
    server trusts for client certificates, and one is required (AutoMTLS).
    The server serves TLS with a self-signed certificate of its own, valid
    for the name "localhost", which the host checks.
 4. The server listens on a new Unix socket in PLUGIN_UNIX_SOCKET_DIR (made
    group-writable for PLUGIN_UNIX_SOCKET_GROUP when that is set).
 5. Besides the plugin's own service it serves grpc.health.v1.Health (SERVING
    for "plugin") and go-plugin's plugin.GRPCController/Shutdown, which the
    host calls to stop the plugin.
 6. Once serving, it prints the one handshake line on stdout:
        1|<version>|unix|<socket>|grpc|<server certificate, DER, base64 without padding>
    and nothing else on stdout, ever.
 7. It runs until Shutdown, SIGTERM or SIGINT, or until its parent, the
    host, is gone.

With TRAINFORGE_PLUGIN_SOCKET set to an absolute path (serve_socket()), the
plugin runs on its own, as in a container of its own, and the host connects
to it (`external.socket` in its configuration): no cookie, no handshake
line, no TLS and no watch of the parent. It serves the same services on a
Unix socket at that path, made with mode 0660, after removing a socket that
nothing listens on any more, and removes it when it stops (SIGTERM, SIGINT).

Logs go to stderr as JSON lines with "@level" and "@message", which the host
forwards into its own log under the plugin's name, with their level.
"""

from __future__ import annotations

import base64
import datetime
import grp
import json
import logging
import os
import signal
import socket
import stat
import sys
import tempfile
import threading
from collections import OrderedDict
from concurrent import futures
from typing import Callable, Mapping, Optional

# The parent when the program started, read before anything slow: a host
# that dies before it is read goes unseen.
PARENT_AT_START = os.getppid()

# gRPC's C core logs plain lines to stderr; only its errors are worth the
# host's log.
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")

import grpc  # noqa: E402
from cryptography import x509  # noqa: E402
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID  # noqa: E402
from google.protobuf import descriptor_pb2, proto_builder  # noqa: E402

COOKIE_KEY = "TRAINFORGE_PLUGIN"
SOCKET_ENV = "TRAINFORGE_PLUGIN_SOCKET"
SOCKET_MODE = 0o660
COOKIE_VALUE = "6f1e1a4c-trainforge-plugin"
CORE_PROTOCOL = 1
PROTOCOL_VERSIONS = (1,)
HEALTH_SERVICE = "plugin"
PARENT_POLL_SECONDS = 1.0

log = logging.getLogger("goplugin")


class StartError(Exception):
    """The plugin cannot start; the message says why, on stderr."""


# --- logging --------------------------------------------------------------

_LEVELS = {logging.DEBUG: "debug", logging.INFO: "info", logging.WARNING: "warn",
           logging.ERROR: "error", logging.CRITICAL: "error"}


class JSONLines(logging.Formatter):
    """One hclog-style JSON object per record. Key/value pairs come from
    the record's "fields" (log.info("msg", extra={"fields": {...}}))."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "@level": _LEVELS.get(record.levelno, "info"),
            "@message": record.getMessage(),
            "@timestamp": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="microseconds"),
            "@module": record.name,
        }
        entry.update(getattr(record, "fields", {}))
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


def setup_logging(level: int = logging.DEBUG) -> None:
    """Logs everything to stderr as JSON lines; the host filters by level."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JSONLines())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)


# --- handshake --------------------------------------------------------------

def negotiate(env: Mapping[str, str]) -> int:
    """Returns the highest protocol version both sides speak."""
    offered = env.get("PLUGIN_PROTOCOL_VERSIONS", "")
    if not offered:
        return max(PROTOCOL_VERSIONS)  # as go-plugin: an old host offers none
    versions = set()
    for v in offered.split(","):
        try:
            versions.add(int(v))
        except ValueError:
            log.warning("ignoring a protocol version that is not a number", extra={"fields": {"version": v}})
    common = versions.intersection(PROTOCOL_VERSIONS)
    if not common:
        raise StartError(f"the host speaks plugin protocol versions {offered}, this plugin speaks "
                         f"{','.join(map(str, PROTOCOL_VERSIONS))}: use a plugin and a controller of the same protocol")
    return max(common)


def server_certificate() -> tuple[bytes, bytes, bytes]:
    """Returns a fresh self-signed certificate for "localhost" (the name the
    host verifies), as PEM and DER, and its private key as PEM."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name).issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(seconds=30))  # clock skew
        .not_valid_after(now + datetime.timedelta(days=3650))    # the process's life, at most
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, content_commitment=False,
                                     key_encipherment=False, data_encipherment=False, key_agreement=False,
                                     crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return cert.public_bytes(serialization.Encoding.PEM), cert.public_bytes(serialization.Encoding.DER), key_pem


def handshake_line(version: int, socket_path: str, cert_der: bytes) -> str:
    # Go's base64.RawStdEncoding: the standard alphabet without "=" padding,
    # which go-plugin refuses.
    cert = base64.b64encode(cert_der).decode("ascii").rstrip("=")
    return f"{CORE_PROTOCOL}|{version}|unix|{socket_path}|grpc|{cert}"


def socket_path(env: Mapping[str, str]) -> str:
    """A new path in PLUGIN_UNIX_SOCKET_DIR (the temp dir when unset); the
    socket must not exist yet."""
    fd, path = tempfile.mkstemp(prefix="plugin", dir=env.get("PLUGIN_UNIX_SOCKET_DIR") or None)
    os.close(fd)
    os.remove(path)
    return path


def share_socket(path: str, group: str) -> None:
    """Lets a group use the socket, as go-plugin does for PLUGIN_UNIX_SOCKET_GROUP."""
    gid = int(group) if group.isdigit() else grp.getgrnam(group).gr_gid
    os.chown(path, -1, gid)
    os.chmod(path, 0o660)


# --- the services every go-plugin serves -------------------------------------

_T = descriptor_pb2.FieldDescriptorProto
# grpc.health.v1's two messages. Debian ships no grpcio-health-checking; the
# status enum is an int32 on the wire.
HealthCheckRequest = proto_builder.MakeSimpleProtoClass(
    OrderedDict([("service", _T.TYPE_STRING)]), full_name="grpc.health.v1.HealthCheckRequest")
HealthCheckResponse = proto_builder.MakeSimpleProtoClass(
    OrderedDict([("status", _T.TYPE_INT32)]), full_name="grpc.health.v1.HealthCheckResponse")
SERVING = 1


def health_handler() -> grpc.GenericRpcHandler:
    def check(request, context: grpc.ServicerContext):
        if request.service not in ("", HEALTH_SERVICE):
            context.abort(grpc.StatusCode.NOT_FOUND, f"unknown service {request.service!r}")
        return HealthCheckResponse(status=SERVING)

    return grpc.method_handlers_generic_handler("grpc.health.v1.Health", {
        "Check": grpc.unary_unary_rpc_method_handler(
            check, request_deserializer=HealthCheckRequest.FromString,
            response_serializer=HealthCheckResponse.SerializeToString),
    })


def controller_handler(stop: threading.Event) -> grpc.GenericRpcHandler:
    """go-plugin's plugin.GRPCController: Shutdown takes and returns an
    empty message, which is zero bytes on the wire."""
    def shutdown(_request, _context):
        log.debug("the host asked the plugin to shut down")
        stop.set()
        return b""

    return grpc.method_handlers_generic_handler("plugin.GRPCController", {
        "Shutdown": grpc.unary_unary_rpc_method_handler(
            shutdown, request_deserializer=lambda b: b, response_serializer=lambda b: b),
    })


def watch_parent(stop: threading.Event, parent: int) -> None:
    """Sets stop when this process is re-parented: the host is gone. The
    host also asks Linux for a parent-death signal; this covers the rest."""
    while not stop.wait(PARENT_POLL_SECONDS):
        if os.getppid() != parent:
            log.info("the host that started this plugin is gone; exiting",
                     extra={"fields": {"hostPID": parent, "parentPID": os.getppid()}})
            stop.set()


# --- serving -----------------------------------------------------------------

NOT_A_PLUGIN = """This is a Trainforge plugin, {name}: the Trainforge controller starts it, it is not meant to be run by hand.
To use it, enable it in the controller's configuration file, for example:

  plugins:
  - name: {name}
    external:
      command: /usr/bin/python3
      args: [{script}]
"""


def serve(name: str, register: Callable[[grpc.Server], None], env: Optional[Mapping[str, str]] = None) -> int:
    """Serves a plugin until the host stops it; returns the exit status.
    register adds the plugin's PluginService to the server."""
    env = os.environ if env is None else env
    if env.get(SOCKET_ENV):
        return serve_socket(name, register, env[SOCKET_ENV])
    if env.get(COOKIE_KEY) != COOKIE_VALUE:
        sys.stderr.write(NOT_A_PLUGIN.format(name=name, script=os.path.abspath(sys.argv[0])))
        if env.get(COOKIE_KEY):
            sys.stderr.write(f"({COOKIE_KEY} is set, but not to the value a Trainforge host sets.)\n")
        return 1
    setup_logging()
    try:
        version = negotiate(env)
        client_cert = env.get("PLUGIN_CLIENT_CERT", "").encode()
        if not client_cert:
            raise StartError("PLUGIN_CLIENT_CERT is not set: a Trainforge host always sets it (AutoMTLS), "
                             "and this plugin serves only mutual TLS")
        cert_pem, cert_der, key_pem = server_certificate()
        creds = grpc.ssl_server_credentials([(key_pem, cert_pem)], root_certificates=client_cert,
                                            require_client_auth=True)
        path = socket_path(env)
    except StartError as e:
        log.error(str(e))
        return 1

    stop = threading.Event()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="rpc"))
    register(server)
    server.add_generic_rpc_handlers((health_handler(), controller_handler(stop)))
    if server.add_secure_port(f"unix:{path}", creds) == 0:
        log.error("cannot listen on the Unix socket", extra={"fields": {"path": path}})
        return 1
    server.start()
    if env.get("PLUGIN_UNIX_SOCKET_GROUP"):
        share_socket(path, env["PLUGIN_UNIX_SOCKET_GROUP"])

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    threading.Thread(target=watch_parent, args=(stop, PARENT_AT_START), daemon=True, name="parent").start()

    sys.stdout.write(handshake_line(version, path, cert_der) + "\n")
    sys.stdout.flush()
    # From here on stdout belongs to the handshake: a stray print goes to
    # stderr, where the host logs it, instead of confusing go-plugin.
    sys.stdout = sys.stderr
    log.debug("serving", extra={"fields": {"protocolVersion": version, "socket": path}})

    while not stop.wait(0.5):  # a timeout keeps signal handlers running
        pass
    server.stop(grace=1).wait()
    try:
        os.remove(path)
    except FileNotFoundError:
        pass
    return 0


def remove_stale_socket(path: str) -> None:
    """Removes a socket nothing listens on (left by a plugin that was
    killed); refuses to remove anything else."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(mode):
        raise StartError(f"{path} exists and is not a socket; not removing it")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.settimeout(1)
        s.connect(path)
    except ConnectionRefusedError:
        os.remove(path)
        return
    except OSError as e:
        raise StartError(f"checking the socket left at {path}: {e}") from e
    finally:
        s.close()
    raise StartError(f"another process serves on the socket {path}; not taking it over")


def serve_socket(name: str, register: Callable[[grpc.Server], None], path: str) -> int:
    """Serves a plugin on the Unix socket at path until SIGTERM or SIGINT;
    returns the exit status."""
    setup_logging()
    try:
        if not os.path.isabs(path):
            raise StartError(f"{SOCKET_ENV}={path!r} is not an absolute path")
        remove_stale_socket(path)
    except StartError as e:
        log.error(str(e))
        return 1
    stop = threading.Event()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="rpc"))
    register(server)
    server.add_generic_rpc_handlers((health_handler(),))
    if server.add_insecure_port(f"unix:{path}") == 0:
        log.error("cannot listen on the Unix socket", extra={"fields": {"path": path}})
        return 1
    server.start()
    os.chmod(path, SOCKET_MODE)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    log.info("serving on a Unix socket", extra={"fields": {"plugin": name, "socket": path}})
    while not stop.wait(0.5):
        pass
    server.stop(grace=5).wait()
    try:
        os.remove(path)
    except FileNotFoundError:
        pass
    return 0
