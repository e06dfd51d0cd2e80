"""Issue 28 item 3: with a database, project memory is keyed by the normalised origin remote."""

import subprocess

import pytest

from paicli.memory.longterm.entry import normalize_project_key
from paicli.run.database import normalized_remote, project_key


@pytest.mark.parametrize("url", ["git@github.com:Acme/Shop.git", "https://me@github.com/Acme/Shop",
                                 "ssh://git@GitHub.com/Acme/Shop.git/", "https://github.com/Acme/Shop.git"])
def test_every_form_of_one_remote_gives_one_key(url):
    assert normalized_remote(url) == "github.com/Acme/Shop"


def test_a_port_other_than_ssh_is_part_of_the_key_and_a_local_path_is_no_remote():
    assert normalized_remote("https://git.corp:8443/team/app.git") == "git.corp:8443/team/app"
    assert normalized_remote("/srv/git/app.git") == "" and normalized_remote("") == ""


def test_the_project_path_is_the_key_without_an_origin(tmp_path):
    assert project_key(tmp_path) == normalize_project_key(tmp_path)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert project_key(tmp_path) == normalize_project_key(tmp_path)
    subprocess.run(["git", "-C", str(tmp_path), "remote", "add", "origin", "git@github.com:Acme/Shop.git"], check=True)
    assert project_key(tmp_path) == "github.com/Acme/Shop"
