"""What a call does to a service every host shares (XLA604; project mode's ``shared_effect``).

An experiment tracker, a hub or object-store upload, a write to a ``gs://`` path, ``gsutil
cp``: an action meant once per run, not once per host. Asked by the rule of each call under
a local-master test, and by the project layer of each function's own calls (a helper of
another module that uploads).
"""

from __future__ import annotations

import ast

from .runtime import str_value

#: libraries whose calls act once per run on a shared service (experiment trackers, hubs,
#: object stores)
_SHARED_PREFIXES = ("wandb.", "mlflow.", "comet_ml.", "neptune.", "clearml.", "google.cloud.storage.", "gcsfs.",
                    "tensorflow.io.gfile.", "boto3.", "s3fs.")
_HUB_WRITES = ("huggingface_hub.upload_", "huggingface_hub.create_repo", "huggingface_hub.create_commit",
               "huggingface_hub.HfApi.upload_")
_SHARED_METHODS = frozenset({"push_to_hub", "upload_file", "upload_folder", "upload_from_filename",
                             "upload_from_string", "upload_from_file", "log_artifact", "create_repo"})
_CLOUD = ("gs://", "s3://", "hf://", "gcs://", "az://", "abfs://")
_WRITERS = frozenset({"torch.save", "shutil.copy", "shutil.copy2", "shutil.copyfile", "shutil.copytree",
                      "shutil.move", "numpy.save", "json.dump", "pickle.dump"})
_WRITER_METHODS = frozenset({"save_pretrained", "save_model", "to_csv", "to_json", "write_text", "write_bytes"})
_SHELLS = frozenset({"subprocess.run", "subprocess.call", "subprocess.check_call", "subprocess.check_output",
                     "subprocess.Popen", "os.system"})
_SHELL_WORDS = ("gsutil", "gcloud storage", "aws s3")


def _cloud_text(model, expr, ctx) -> bool:
    if type(expr) is ast.Call and model.call_name(expr, ctx) == "os.path.join" and expr.args:
        expr = expr.args[0]
    text = str_value(model, expr, ctx)
    return text is not None and text.startswith(_CLOUD)


def shared_effect(model, call, ctx) -> str | None:
    """What makes ``call`` an action on something every host shares (an experiment
    tracker, a hub or object-store upload, a write to a ``gs://`` path, ``gsutil cp``),
    as a short name; None for local work (files on the host, downloads, printing)."""
    q = model.call_name(call, ctx)
    f = call.func
    if q is not None:
        if q.startswith(_SHARED_PREFIXES) or q.startswith(_HUB_WRITES):
            last = q.rsplit(".", 1)[-1]
            if last[:1].isupper():
                return None  # wandb.Artifact(...), storage.Client(): an object, no action yet
            return q if len(q) <= 24 else last
        if q in _WRITERS and any(_cloud_text(model, a, ctx) for a in call.args[1:]):
            return q
        if q in _SHELLS and call.args:
            arg = call.args[0]
            parts = arg.elts if type(arg) in (ast.List, ast.Tuple) else [arg]
            words = " ".join(str_value(model, p, ctx) or "" for p in parts)
            if any(w in words for w in _SHELL_WORDS):
                return next(w for w in _SHELL_WORDS if w in words)
        return None
    if type(f) is ast.Name and f.id == "open" and model.lookup("open", ctx, None) is None and call.args:
        mode = model.kwarg(call, "mode", 1)
        text = model.const(mode, ctx) if isinstance(mode, ast.AST) else None
        if isinstance(text, str) and any(c in text for c in "wax") and _cloud_text(model, call.args[0], ctx):
            return "open"
        return None
    if type(f) is ast.Attribute:
        if f.attr in _SHARED_METHODS:
            return f".{f.attr}()"
        if f.attr in _WRITER_METHODS and any(_cloud_text(model, a, ctx) for a in call.args[:1]):
            return f".{f.attr}()"
    return None
