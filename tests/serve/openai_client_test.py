"""hearth-serve through the official `openai` npm client, on the tiny GGUF
model: models list and retrieve, chat (whole, streamed, with logprobs),
completions (whole and streamed), the error paths (a bad key is
AuthenticationError 401, a metrics-only key PermissionDeniedError 403, an
unknown model NotFoundError 404, a refused
field BadRequestError 400 naming it) and embeddings (floats and the
client's default base64, decoded by the client to the same vectors).

The checks are in openai_client_check.js; this starts the server and runs
it with node. The client is installed by cmake/scripts/setup_debian.sh
(tests/serve/install_openai_client.sh) into .deps/openai_node; without it
the test fails, naming the script, rather than passing unseen."""

import os
import shutil
import subprocess
import sys

from serve_harness import KEYS, SCRAPE_KEY, Checks, Server, server_binary

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.environ.get("HEARTH_OPENAI_NODE_DIR",
                         os.path.join(HERE, "..", "..", ".deps", "openai_node"))

checks = Checks("serve/openai_client")
check = checks.check


def main():
    node = shutil.which("node") or shutil.which("nodejs")
    package = os.path.join(PACKAGE, "package")
    if not check(node is not None, "node is on PATH"):
        return checks.finish()
    if not check(os.path.isfile(os.path.join(package, "index.js")),
                 "the openai client is installed in %s (run tests/serve/install_openai_client.sh)"
                 % PACKAGE):
        return checks.finish()
    with open(os.path.join(PACKAGE, "VERSION")) as f:
        print("client:", f.read().strip())
    with Server(server_binary()) as s:
        run = subprocess.run([node, os.path.join(HERE, "openai_client_check.js"), package,
                              str(s.port), KEYS["ana"], SCRAPE_KEY],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             timeout=300)
        print(run.stdout, end="")
        check(run.returncode == 0, "every client check passed (node exit %d)" % run.returncode)
        check(s.proc.poll() is None, "the server is still up after the client's calls")
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
