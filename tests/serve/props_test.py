"""hearth-serve's GET /props over loopback, on the tiny GGUF model:
llama-server's shape with what is true here (the defaults a request gets,
the context, the slots, the model, the build), behind the keys of
/v1/models, and nothing of any member's requests."""

import sys

from serve_harness import ADMIN_KEY, KEYS, SCRAPE_KEY, Checks, Server, server_binary

checks = Checks("serve/props")
check = checks.check


def shape_and_truth(binary):
    with Server(binary, "--default_max_tokens=7", "--n_seq_max=4", "--model_name=house") as s:
        st, h, props = s.request("GET", "/props", key=KEYS["ana"])
        check(st == 200 and h["content-type"] == "application/json", "/props is 200 JSON")
        settings = props.get("default_generation_settings", {})
        params = settings.get("params", {})
        check(settings.get("n_ctx") == 8192, "n_ctx is one request's context")
        check(props.get("total_slots") == 4, "total_slots is --n_seq_max")
        check(props.get("model_alias") == "house" and props.get("model_path") == "",
              "the model's name, and no path for the tiny test model")
        check(isinstance(props.get("chat_template"), str), "chat_template is a string")
        check(props.get("modalities") == {"vision": False, "audio": False}, "text only")
        check(str(props.get("build_info", "")).startswith("hearth-serve "), "build_info names it")
        check(params.get("n_predict") == 7 and params.get("max_tokens") == 7 and
              params.get("temperature") == 1.0 and params.get("top_p") == 1.0 and
              params.get("top_k") == 0 and params.get("min_p") == 0.0 and
              params.get("repeat_last_n") == 64 and params.get("repeat_penalty") == 1.0 and
              params.get("presence_penalty") == 0.0 and params.get("frequency_penalty") == 0.0,
              "params are the defaults: %r" % params)
        st, _, out = s.request("POST", "/v1/completions", {"model": "house", "prompt": "secret-ana",
                                                           "temperature": 0}, key=KEYS["ana"])
        check(st == 200 and out["usage"]["completion_tokens"] == params.get("n_predict"),
              "a completion without max_tokens gets n_predict tokens")
        _, _, after = s.request("GET", "/props", key=KEYS["ben"])
        check(after == props and "secret" not in str(after),
              "another member's /props is the same, nothing of ana's request in it")
        for key, status in ((None, 401), ("sk-not-a-key", 401), (SCRAPE_KEY, 403),
                            (ADMIN_KEY, 403), (KEYS["cleo"], 200)):
            listed = s.request("GET", "/v1/models", key=key)[0]
            st, _, body = s.request("GET", "/props", key=key)
            check(st == status == listed and (status == 200 or "error" in body),
                  "/props with key %r is %d like /v1/models" % (key, status))
        st, h, _ = s.request("GET", "/props", key=KEYS["ana"], headers={"X-Request-Id": "p-1"})
        check(h.get("x-request-id") == "p-1", "X-Request-Id is echoed")


def open_household(binary):
    with Server(binary, household=None) as s:
        st, _, props = s.request("GET", "/props")
        check(st == 200 and props["total_slots"] == 8 and props["model_alias"] == "tiny" and
              props["default_generation_settings"]["params"]["n_predict"] == 256,
              "without a household file no key is needed; the flags' defaults")


def main():
    shape_and_truth(server_binary())
    open_household(server_binary())
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
