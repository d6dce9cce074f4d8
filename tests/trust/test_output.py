"""What the CLI prints is valid UTF-8, and human output never passes a control character to the terminal."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from engine.embedding import SentenceTransformerEmbedder
from interfaces.cli import main
from interfaces.cli.output import json_text, plain

HOSTILE = "Invoice \x1b[2J\x1b]8;;http://evil\x07click\x1b]8;;\x07 [bold red]paid[/] \u202eevil\r done"


def _run(data_dir: Path, *args: str) -> tuple[int, bytes, str]:
    result = CliRunner().invoke(main, ["--data-dir", str(data_dir), *args])
    return result.exit_code, result.stdout_bytes, result.stderr


def test_human_output_neutralises_control_characters(tmp_path: Path, embedder: SentenceTransformerEmbedder) -> None:
    data = tmp_path / "d"
    code, out, err = _run(data, "remember", HOSTILE, "--context", json.dumps({"note": "\x1b[31m"}), "--format",
                          "json")
    assert code == 0, err
    memory_id = json.loads(out)["id"]
    assert json.loads(out)["content"] == HOSTILE  # stored exactly; only the display is neutralised
    for args in (("get", memory_id), ("list",), ("recall", "invoice")):
        code, out, err = _run(data, *args)
        assert code == 0, err
        text = out.decode("utf-8")
        assert not any(c in text for c in "\x1b\x07\r\u202e"), (args, text)
        assert "\\x1b" in text  # shown, visibly, rather than dropped
        assert "[bold red]" in text  # rich markup in stored text is printed, not applied


def test_json_output_is_valid_utf8_and_escapes_controls(tmp_path: Path, embedder: SentenceTransformerEmbedder) -> None:
    data = tmp_path / "d"
    code, out, _ = _run(data, "remember", HOSTILE, "--format", "json")
    assert code == 0
    text = out.decode("utf-8")  # raises if it is not valid UTF-8
    assert "\x1b" not in text and json.loads(text)["content"] == HOSTILE


def test_output_helpers_never_emit_lone_surrogates() -> None:
    # A value an older version of the store may hold: printing it must not crash or emit invalid UTF-8.
    old = {"content": "poison \ud800", "context": {"k": "\udcff"}}
    json_text(old).encode("utf-8")
    plain("poison \ud800 \x1b[0m").encode("utf-8")
    assert plain("a\nb", keep_newlines=True) == "a\nb" and plain("a\nb") == "a\\x0ab"
    assert plain("emoji 👩\u200d💻 ok") == "emoji 👩\u200d💻 ok"
