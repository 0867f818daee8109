"""Storages and secrets: no password is stored, served, exported or printed, whatever it holds.

A real study runs with hostile passwords in every URL form convtune meets (a fake PostgreSQL URL in
the spec beside a working SQLite storage; a real PostgreSQL one, whose trust authentication accepts
any password, where ``CONVTUNE_TEST_POSTGRES`` points at one), then the storage file, the
artifacts, the exports and every line the CLI printed are searched for each password, raw and
%-decoded.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest
import yaml
from cli_runner import cli
from services import drop_postgres_study, postgres_url, tag
from specs import CLI_SPACE, CLI_SPEC

from convtune.storage import redact, resolve_storage_url, strip_password, url_secrets

# base64 with "/" and "+", "@" and ":" inside, %-escapes, a query-looking tail, a lone quote.
HOSTILE = ["s3/cr+et==", "p@ss@w0rd", "co:lon:pw", "pct%2Fenc%40d", "q?uery&x=1", "it's#hash"]


@pytest.mark.parametrize("password", HOSTILE)
@pytest.mark.parametrize(
    "form",
    [
        "postgresql://bob:{pw}@db.example:5432/studies",
        "postgresql+psycopg://bob:{pw}@db.example/studies?application_name=x",
        "postgresql://bob@db.example/studies?password={qpw}",
        "postgresql://bob@db.example/studies?sslmode=require&sslpassword={qpw}",
        "redis://:{pw}@cache.example:6379/0",
        "rediss://default:{pw}@cache.example/0?prefix=p",
    ],
)
def test_redaction_hides_every_password_form(form: str, password: str) -> None:
    # A password in a query must be %-encoded (a raw "&" starts the next parameter).
    url = form.format(pw=password, qpw=quote(password, safe=""))
    password = password if "{pw}" in form else quote(password, safe="")
    for shown in (redact(url), strip_password(url)):
        assert password not in shown, shown
        assert "db.example" in shown or "cache.example" in shown
    assert password in url_secrets(url)
    assert url_secrets(strip_password(url)) == []


def test_redaction_leaves_urls_without_passwords_alone() -> None:
    for url in (
        "postgresql://postgres@127.0.0.1:5432/test",
        "sqlite:///studies/a:b@c.db",
        "journal:///tmp/x.log",
        "redis://127.0.0.1:6379/0?prefix=p",
    ):
        assert redact(url) == url == strip_password(url)


def test_a_password_less_url_takes_its_password_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    full = "postgresql://bob:s3/cret@db.example/studies"
    monkeypatch.setenv("CONVTUNE_STORAGE", full)
    assert resolve_storage_url("postgresql://bob@db.example/studies") == full
    assert resolve_storage_url("postgresql://eve@db.example/studies") == "postgresql://eve@db.example/studies"
    assert resolve_storage_url(None) == full


def _leaks(root: Path, texts: list[str], secrets: list[str]) -> list[str]:
    found = []
    # The user's own spec holds the URL they wrote; everything convtune wrote must not.
    blobs = [(str(p), p.read_bytes()) for p in root.rglob("*") if p.is_file() and p.name != "spec.yaml"]
    blobs += [(f"output {i}", t.encode()) for i, t in enumerate(texts)]
    for where, blob in blobs:
        for secret in secrets:
            if len(secret) >= 4 and secret.encode() in blob:
                found.append(f"{secret!r} in {where}")
    return found


def _exercise(capsys: pytest.CaptureFixture[str], name: str, storage: list[str]) -> list[str]:
    """Create, run, and read a study through every command that prints or writes; their output."""
    texts = []
    for args in (
        ["study", "create", name, "--config", "spec.yaml", *storage],
        ["study", "create", name, "--config", "spec.yaml", *storage],  # again: the same study
        ["study", "run", name, "-n", "1", *storage],
        ["study", "list", *storage],
        ["study", "show", name, *storage],
        ["study", "best", name, *storage],
        ["study", "best", name, "--json", *storage],
        ["study", "export", name, "--format", "yaml", "-o", "best.yaml", *storage],
        ["study", "export", name, "--format", "json", "-o", "best.json", *storage],
        ["study", "export", name, "--format", "python", "-o", "best.py", *storage],
    ):
        code, out, err = cli(capsys, *args)
        assert code == 0, (args, out[-2000:], err[-2000:])
        texts.append(out + err)
    return texts


@pytest.mark.parametrize("password", HOSTILE[:3])
def test_no_password_reaches_storage_artifacts_exports_or_output(
    password: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONVTUNE_STORAGE", raising=False)
    secret_url = (
        f"postgresql://bob:{password}@db.example:5432/studies?sslpassword={quote(password, safe='')}x"
    )
    (tmp_path / "space.yaml").write_text(yaml.safe_dump(CLI_SPACE))
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump({**CLI_SPEC, "storage": secret_url}))
    texts = _exercise(capsys, "s", ["--storage", f"sqlite:///{tmp_path / 'studies' / 'c.db'}"])
    # An unreachable storage's error names it, redacted.
    code, out, err = cli(
        capsys, "study", "list", "--storage", secret_url.replace("db.example", "127.0.0.1:1")
    )
    assert code == 2 and "cannot open storage" in err
    texts.append(out + err)
    # A rotated password is the same study, not "differs in: storage".
    rotated = yaml.safe_dump({**CLI_SPEC, "storage": secret_url.replace(password, "rotated-pw")})
    (tmp_path / "spec.yaml").write_text(rotated)
    code, out, err = cli(
        capsys,
        "study",
        "create",
        "s",
        "--config",
        "spec.yaml",
        "--storage",
        f"sqlite:///{tmp_path / 'studies' / 'c.db'}",
    )
    assert code == 0, err
    texts.append(out + err)
    assert (tmp_path / "best.yaml").is_file() and (tmp_path / "studies" / "c.db").is_file()
    assert _leaks(tmp_path, texts, url_secrets(secret_url)) == []


def test_no_password_reaches_a_postgresql_study(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    base = postgres_url()  # trust authentication: any password is accepted
    if "@" not in base or ":" in base.split("://", 1)[1].split("@", 1)[0]:
        pytest.skip("needs a password-less CONVTUNE_TEST_POSTGRES (user@host) to add passwords to")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONVTUNE_STORAGE", raising=False)
    (tmp_path / "space.yaml").write_text(yaml.safe_dump(CLI_SPACE))
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(CLI_SPEC))
    user, rest = base.split("://", 1)[1].split("@", 1)
    scheme = base.split("://", 1)[0]
    for password in HOSTILE[::2]:
        name = tag("secret")
        url = f"{scheme}://{user}:{quote(password, safe='')}@{rest}"
        try:
            texts = _exercise(capsys, name, ["--storage", url])
            # The study's attributes and trials, as optuna-dashboard serves them.
            import sqlalchemy

            engine = sqlalchemy.create_engine(base)
            with engine.connect() as conn:
                rows = []
                for table in (
                    "study_user_attributes",
                    "study_system_attributes",
                    "trial_user_attributes",
                    "trial_system_attributes",
                    "studies",
                ):
                    rows += [repr(r) for r in conn.execute(sqlalchemy.text(f"SELECT * FROM {table}"))]
            engine.dispose()
            texts.append("\n".join(rows))
            assert _leaks(tmp_path, texts, url_secrets(url)) == [], password
        finally:
            drop_postgres_study(base, name)


def test_a_missing_postgresql_database_is_reported_at_once(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not retried as a lost connection: the reconnect budget would keep the user waiting for nothing."""
    base = postgres_url()
    monkeypatch.setenv("CONVTUNE_RECONNECT_SECONDS", "3600")  # a retry would hang the test
    missing = base.rsplit("/", 1)[0] + "/convtune_no_such_db"
    code, out, err = cli(capsys, "study", "list", "--storage", missing)
    assert code == 2, err
    assert "does not exist" in err and "create the database" in err
    assert len(err.strip().splitlines()) == 1
