"""The guard's words are bash's words (paicli issue 23, item 4): quote removal and the
expansions it knows, compared with what a real bash prints for the same text.

Each case runs ``bash -c 'printf "%s\\0" WORDS'`` for real, with a fixed HOME, in a temporary
directory, and compares the arguments bash passed with the words ``shell_parse`` read (when the
guard claims to know them).
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.support.properties import examples
from paicli.tools.policy.command_rules import RM
from paicli.tools.policy.guards import CommandGuard
from paicli.tools.policy.shell_parse import parse
from paicli.tools.policy.shell_quote import expand, heredoc

HOME = "/home/dev"
BASH = shutil.which("bash")
pytestmark = pytest.mark.skipif(BASH is None, reason="needs bash")


def bash_words(words: str, cwd: str) -> list[str]:
    """The arguments bash passes to printf for ``printf '%s\\0' WORDS``."""
    env = {"HOME": HOME, "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C.UTF-8"}
    done = subprocess.run([BASH, "--norc", "--noprofile", "-c", "printf '%s\\0' " + words], cwd=cwd, env=env,
                          capture_output=True, check=True, timeout=10)
    return done.stdout.decode("utf-8", "surrogateescape").split("\0")[:-1]


def guard_words(words: str, cwd: str) -> list[tuple[str, bool]]:
    # the last one: bashlex also sees $(…) inside $'…' and walks it first (a needless doubt)
    simple = [s for s in parse("printf '%s\\0' " + words, cwd, HOME).simples if s.name == "printf"][-1]
    return [(w.text, w.known) for w in simple.args[1:]]


HAND_WRITTEN = [
    # double quotes: only \$ \` \" \\ and backslash-newline lose their backslash
    (r'"\$HOME"', "$HOME"),
    (r'"\`x\`"', "`x`"),
    (r'"a\"b"', 'a"b'),
    (r'"a\\b"', "a\\b"),
    ('"a\\\nb"', "ab"),
    (r'"\x\n\'"', r"\x\n\'"),
    ('"$HOME/x"', f"{HOME}/x"),
    ('"${HOME}"', HOME),
    ('"~"', "~"),
    ("\"'$HOME'\"", f"'{HOME}'"),
    # single quotes keep everything, backslashes included
    (r"'\$HOME'", r"\$HOME"),
    ("'a'\"'\"'b'", "a'b"),
    # unquoted backslashes quote the next character; backslash-newline vanishes
    (r"\$HOME", "$HOME"),
    (r"a\ b", "a b"),
    ("a\\\nb", "ab"),
    (r"\~", "~"),
    (r"\\", "\\"),
    # ANSI-C quoting
    (r"$'a\x41\101\u00e9'", "aAAé"),
    (r"$'\n\t\\\''", "\n\t\\'"),
    (r"$'a\0b'", "a"),
    (r"$'\cA\e'", "\x01\x1b"),
    (r"$'\q\xZZ'", r"\q\xZZ"),
    (r'$"x$HOME"', f"x{HOME}"),
    ('"$\'x\'"', "$'x'"),
    # tildes and the known variables
    ("~", HOME),
    ("~/x", f"{HOME}/x"),
    ("a~", "a~"),
    ("x=~/a:~/b", f"x={HOME}/a:{HOME}/b"),
    ("--opt=~/a", "--opt=~/a"),
    ("~=~", HOME + "=~"),  # a tilde prefix also ends before "=~" (bash's suffixes: "/", ":", "=~")
    ("~=x", "~=x"),
    ("a=~=~", f"a={HOME}={HOME}"),  # in an assignment, "=~" starts a tilde as ":~" does
    ("b=x:~=~", f"b=x:{HOME}={HOME}"),
    ("$HOME$HOME", HOME + HOME),
    ("${HOME}x", HOME + "x"),
    ("a$", "a$"),
    ("$/", "$/"),
]


@pytest.mark.parametrize(("word", "text"), HAND_WRITTEN)
def test_hand_written_words_read_as_bash_reads_them(tmp_path, word, text):
    assert bash_words(word, str(tmp_path)) == [text]
    assert guard_words(word, str(tmp_path)) == [(text, True)]


@pytest.mark.parametrize("word", ["$X", "${HOME:-/}", "$1", "$(echo x)", "`echo x`", "~root", '"$X"', "a${X}b"])
def test_expansions_the_guard_cannot_know_make_the_word_unknown(word):
    text, known, _ = expand(word, HOME, "/w")
    assert not known and text == word.strip('"')


def test_without_a_home_a_tilde_is_unknown():
    assert expand("~/x", None, "/w")[1] is False
    assert expand('"$HOME"', None, "/w")[1] is False


# Pieces of one shell word, each valid on its own, concatenated without unquoted blanks.
_PLAIN = st.text(alphabet="ab/._-=:~x", min_size=1, max_size=4)
_QUOTED_CHARS = "ab $~;|&()<>#*{}\\\"'`\n/="
_DOUBLE_PART = st.one_of(
    st.text(alphabet="ab ~;|&()<>#*{}'/=:", min_size=1, max_size=3),
    st.sampled_from(["\\$", "\\`", '\\"', "\\\\", "\\\n", "\\x", "\\n", "\\'", "$HOME", "${HOME}", "$PWD", "$", "$/"]),
)
_ANSI_PART = st.one_of(
    st.text(alphabet='ab ~;|&()$"/', min_size=1, max_size=3),
    st.sampled_from(["\\n", "\\t", "\\\\", "\\'", '\\"', "\\x41", "\\x4", "\\xZ", "\\101", "\\7", "\\0", "\\u00e9",
                     "\\u263a", "\\U0001F600", "\\cA", "\\cz", "\\e", "\\q", "\\a", "\\?"]),
)
_PIECE = st.one_of(
    _PLAIN,
    st.text(alphabet=_QUOTED_CHARS.replace("'", ""), max_size=4).map(lambda t: f"'{t}'"),
    st.lists(_DOUBLE_PART, max_size=4).map(lambda parts: '"' + "".join(parts) + '"'),
    st.lists(_ANSI_PART, max_size=4).map(lambda parts: "$'" + "".join(parts) + "'"),
    st.sampled_from(list(_QUOTED_CHARS + "ab")).map(lambda c: "\\" + c),
    st.sampled_from(["$HOME", "${HOME}", "$PWD", "~", "~/", "~+"]),
)
_WORD = st.lists(_PIECE, min_size=1, max_size=5).map("".join)


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=st.lists(_WORD, min_size=1, max_size=3))
def test_generated_words_read_as_bash_reads_them(tmp_path, words):
    line = " ".join(words)
    try:
        ours = guard_words(line, str(tmp_path))
    except Exception:  # bashlex lacks some syntax: the guard then judges the text (not this test)
        assume(False)
    theirs = bash_words(line, str(tmp_path))
    assume(all(known for _, known in ours))  # an unknown word is judged as unknown, whatever bash makes of it
    assert [text for text, _ in ours] == theirs, line


@pytest.mark.parametrize("command", [
    'bash -c "rm -rf \\$HOME"',
    'bash -c "rm -rf \\"\\$HOME\\""',
    'sh -c "cd \\\\ && cd \\$HOME && rm -rf ./*"',
    "bash -c $'rm -rf \\x7e'",
    "bash -c $'rm -rf \\176/'",
    'bash -c "bash -c \\"rm -rf \\\\\\$HOME\\""',
])
def test_escaped_expansions_inside_nested_shells_are_refused(command):
    assert CommandGuard.refusal(command, "/srv/project", HOME) == RM


def test_a_single_quoted_backslash_dollar_stays_a_literal_name():
    # bash -c 'rm -rf \$HOME' removes a file named "$HOME" in the project: the inner shell sees \$
    assert CommandGuard.refusal("bash -c 'rm -rf \\$HOME'", "/srv/project", HOME) is None


@pytest.mark.parametrize("body", ["rm -rf \\$HOME", "a\\\\b", 'a\\"b', "x\\\ny", "\\`id\\`", "\\x \\n", "'\\$'",
                                  "rm -rf \\\\$HOME", "${HOME}x $PWD \\\\${HOME}"])
def test_a_here_document_reads_as_bash_reads_it(tmp_path, body):
    env = {"HOME": HOME, "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    done = subprocess.run([BASH, "--norc", "-c", f"cat <<EOF\n{body}\nEOF\n"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, check=True, timeout=10)
    assert heredoc(body, HOME, str(tmp_path)) + "\n" == done.stdout


def test_an_escaped_home_in_a_here_document_fed_to_a_shell_is_refused():
    assert CommandGuard.refusal("bash <<EOF\nrm -rf \\$HOME\nEOF\n", "/srv/project", HOME) == RM
    # \\ is a backslash and $HOME still expands: the inner shell reads rm -rf \/home/dev
    assert CommandGuard.refusal("sh <<EOF\nrm -rf \\\\$HOME\nEOF\n", "/srv/project", HOME) == RM
