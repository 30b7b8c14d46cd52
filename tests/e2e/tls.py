"""tls.py - throwaway certificate authorities for the export tests, made with
the openssl command-line tool into a temporary directory.

    pki = TestPKI()          # CA "good" + server cert + client cert,
                             # CA "other" + its own server and client certs
    pki.ca, pki.server_cert, pki.server_key, pki.client_cert, pki.client_key
    pki.other_ca, pki.other_server_cert, pki.other_server_key, ...
    pki.cleanup()

Server certificates are valid for IP 127.0.0.1 and DNS localhost (subject
alternative names), client certificates carry clientAuth. Keys are EC P-256
(PKCS#8 PEM), quick to make. Nothing here touches the network.
"""
import os
import shutil
import subprocess
import tempfile

OPENSSL = shutil.which("openssl") or "/usr/bin/openssl"


def _run(*args, cwd):
    r = subprocess.run([OPENSSL] + list(args), cwd=cwd, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError("openssl %s failed: %s" % (" ".join(args), r.stderr.strip()))


def _key(path, cwd):
    _run("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", path,
         cwd=cwd)


def _ca(d, name):
    """Self-signed CA @name in @d: returns (cert path, key path)."""
    key, cert = os.path.join(d, name + "-ca.key"), os.path.join(d, name + "-ca.pem")
    _key(key, d)
    _run("req", "-x509", "-new", "-key", key, "-out", cert, "-days", "2", "-sha256",
         "-subj", "/O=profcap tests/CN=profcap test CA %s" % name,
         "-addext", "basicConstraints=critical,CA:TRUE",
         "-addext", "keyUsage=critical,keyCertSign,cRLSign",
         "-addext", "subjectKeyIdentifier=hash", cwd=d)
    return cert, key


def _leaf(d, name, ca_cert, ca_key, cn, ext):
    """Certificate @name signed by the CA with extension lines @ext."""
    key, csr, cert = (os.path.join(d, name + s) for s in (".key", ".csr", ".pem"))
    extfile = os.path.join(d, name + ".ext")
    with open(extfile, "w") as f:
        f.write("\n".join(["basicConstraints=critical,CA:FALSE",
                           "subjectKeyIdentifier=hash",
                           "authorityKeyIdentifier=keyid"] + ext) + "\n")
    _key(key, d)
    _run("req", "-new", "-key", key, "-out", csr, "-subj", "/O=profcap tests/CN=" + cn, cwd=d)
    _run("x509", "-req", "-in", csr, "-CA", ca_cert, "-CAkey", ca_key, "-CAcreateserial",
         "-out", cert, "-days", "2", "-sha256", "-extfile", extfile, cwd=d)
    return cert, key


SERVER_EXT = ["keyUsage=critical,digitalSignature,keyEncipherment",
              "extendedKeyUsage=serverAuth",
              "subjectAltName=IP:127.0.0.1,DNS:localhost"]
CLIENT_EXT = ["keyUsage=critical,digitalSignature,keyEncipherment",
              "extendedKeyUsage=clientAuth"]


class TestPKI:
    """Two unrelated CAs, each with a server and a client certificate."""

    def __init__(self, dir=None):
        self._own = dir is None
        self.dir = dir or tempfile.mkdtemp(prefix="profcap-pki.")
        d = self.dir
        self.ca, ca_key = _ca(d, "good")
        self.server_cert, self.server_key = _leaf(d, "server", self.ca, ca_key, "127.0.0.1",
                                                  SERVER_EXT)
        self.client_cert, self.client_key = _leaf(d, "client", self.ca, ca_key,
                                                  "profcap test client", CLIENT_EXT)
        self.other_ca, other_key = _ca(d, "other")
        self.other_server_cert, self.other_server_key = _leaf(
            d, "other-server", self.other_ca, other_key, "127.0.0.1", SERVER_EXT)
        self.other_client_cert, self.other_client_key = _leaf(
            d, "other-client", self.other_ca, other_key, "profcap other client", CLIENT_EXT)

    @staticmethod
    def read(path):
        with open(path, "rb") as f:
            return f.read()

    def cleanup(self):
        if self._own:
            shutil.rmtree(self.dir, ignore_errors=True)


if __name__ == "__main__":
    pki = TestPKI()
    print(pki.dir)
    for p in (pki.server_cert, pki.client_cert, pki.other_server_cert):
        ca = pki.other_ca if "other" in os.path.basename(p) else pki.ca
        r = subprocess.run([OPENSSL, "verify", "-CAfile", ca, p], capture_output=True, text=True)
        print(r.stdout.strip() or r.stderr.strip())
