"""The editor plugins from each package, with no clone (issue #52): Neovim and Emacs follow
their READMEs' "Install" and "A first token" sections as written, headless (`nvim --headless`,
`emacs --batch`), on the toolchain-less "machine" with a fresh HOME: `eval "$(auth-sidecar-try)"`
(the package's own mock), the init lines that find the plugin with `auth-sidecar where`, then
the README's commands, which end with a token from the mock. The plugin files loaded must be
the ones the package installed."""
from __future__ import annotations

import os
import re
import shutil
import signal

import pytest

from as_user import blocks
from installed import Installed, install, remove_deb

JWT = re.compile(r"^[\w-]+\.[\w-]+\.[\w-]+$")
NEOVIM, EMACS = "clients/neovim/README.md", "clients/emacs/README.md"

# Test glue, not the README: runs the README's Ex commands in order, each until the plugin
# reports its outcome (vim.notify), then prints the token register and where the plugin came from.
NVIM_HARNESS = r"""
local seen = {}
vim.notify = function(msg) table.insert(seen, msg); io.stderr:write(msg .. '\n') end
for line in vim.env.README_COMMANDS:gmatch('[^\n]+') do
  local mark = #seen
  vim.cmd((line:gsub('^:', '')))
  local done = vim.wait(30000, function()
    for i = mark + 1, #seen do
      if seen[i]:find('^auth%-sidecar: signed in') or seen[i]:find('^auth%-sidecar: token for') then return true end
    end
    return false
  end, 50)
  if not done then io.stdout:write('TIMEOUT ' .. line .. '\n'); vim.cmd('cquit 3') end
end
io.stdout:write('TOKEN ' .. vim.fn.getreg(vim.fn.has('clipboard') == 1 and '+' or '"') .. '\n')
io.stdout:write('PLUGIN ' .. vim.api.nvim_get_runtime_file('lua/auth_sidecar/init.lua', false)[1] .. '\n')
require('auth_sidecar').stop()
vim.cmd('qa!')
"""

# Test glue: evaluates the README's forms in order (a sign-in until its hook runs), prints the
# last value (the token) and the file auth-sidecar was loaded from.
EMACS_HARNESS = r"""
(let ((forms (car (read-from-string (concat "(" (getenv "README_FORMS") ")"))))
      (signed nil) (value nil))
  (add-hook 'auth-sidecar-sign-in-hook (lambda (&rest _) (setq signed t)))
  (dolist (form forms)
    (setq value (eval form t))
    (when (eq (car form) 'auth-sidecar-sign-in)
      (with-timeout (30 (error "sign-in did not finish"))
        (while (not signed) (accept-process-output nil 0.1)))))
  (princ (format "TOKEN %s\nPLUGIN %s\n" value (symbol-file 'auth-sidecar-token)))
  (auth-sidecar-stop))
"""


def first_token_steps(readme: str, editor: str) -> tuple[str, str]:
    """The README's shell lines (the try line) and what follows in the editor."""
    shell, = blocks("## A first token, against the bundled mock identity platform", "sh", readme)
    try_line, start = [line.split("  #")[0].strip() for line in shell.strip().splitlines()]
    assert try_line == 'eval "$(auth-sidecar-try)"' and start == editor, shell
    language = "vim" if editor == "nvim" else "elisp"
    steps, = blocks("## A first token, against the bundled mock identity platform", language, readme)
    return try_line, steps


SCRIPT = r"""set -e
trap 'auth-sidecar-try stop >/dev/null 2>&1 || true' EXIT
{try_line}
echo "WHERE $(auth-sidecar where neovim) $(auth-sidecar where emacs)"
printf '%s\n' "$NVIM_INIT" >"$HOME/init.lua"
printf '%s\n' "$NVIM_HARNESS" >"$HOME/harness.lua"
echo '--- nvim'
timeout -k 5 60 nvim --headless -u "$HOME/init.lua" -i NONE -n -c "luafile $HOME/harness.lua" </dev/null
printf '%s\n' "$EMACS_INIT" >"$HOME/init.el"
printf '%s\n' "$EMACS_HARNESS" >"$HOME/harness.el"
echo '--- emacs'
timeout -k 5 60 emacs --batch -l "$HOME/init.el" -l "$HOME/harness.el" </dev/null
"""


def after(stdout: str, marker: str) -> dict[str, str]:
    part = stdout.split(f"--- {marker}\n", 1)[1].split("\n--- ", 1)[0]
    return dict(line.split(" ", 1) for line in part.splitlines() if line.startswith(("TOKEN ", "PLUGIN ")))


def editors_get_a_token(kind: str, dist, work) -> None:
    if not (shutil.which("nvim") and shutil.which("emacs")):
        if os.environ.get("CI"):
            pytest.fail("nvim and emacs are needed (scripts/setup.sh installs them)")
        pytest.skip("nvim or emacs is not installed")
    user = install(kind, dist, work)
    try_line, vim_commands = first_token_steps(NEOVIM, "nvim")
    _, elisp = first_token_steps(EMACS, "emacs")
    assert try_line == first_token_steps(EMACS, "emacs")[0]
    nvim_init, = blocks("## Install", "lua", NEOVIM)
    emacs_init, = blocks("## Install", "elisp", EMACS)
    done = user.run(SCRIPT.format(try_line=try_line), timeout=240, README_COMMANDS=vim_commands, NVIM_INIT=nvim_init,
                    NVIM_HARNESS=NVIM_HARNESS, README_FORMS=elisp, EMACS_INIT=emacs_init, EMACS_HARNESS=EMACS_HARNESS)
    stop_a_stray_mock(user.home)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    share = os.path.join(user.prefix, "share", "auth-sidecar")
    where, = [line for line in done.stdout.splitlines() if line.startswith("WHERE ")]
    assert where.split()[1:] == [os.path.join(share, "neovim"), os.path.join(share, "emacs")], where
    for editor, loaded in (("nvim", "neovim"), ("emacs", "emacs")):
        found = after(done.stdout, editor)
        assert JWT.match(found.get("TOKEN", "")), (editor, done.stdout[-2000:], done.stderr[-2000:])
        assert os.path.realpath(found["PLUGIN"]).startswith(os.path.realpath(os.path.join(share, loaded)) + "/"), found


def stop_a_stray_mock(home: str) -> None:
    try:
        with open(os.path.join(home, ".cache", "auth-sidecar-try", "try.pid")) as f:
            os.kill(int(f.read()), signal.SIGTERM)
    except (OSError, ValueError):
        pass


@pytest.mark.parametrize("kind", ["wheel", "npm", "tarball"])
def test_neovim_and_emacs_get_a_token_by_their_readmes_from(kind, dist, tmp_path):
    editors_get_a_token(kind, dist, tmp_path)


@pytest.mark.skipif(os.geteuid() != 0 and not os.environ.get("CI"), reason="apt install needs root")
def test_neovim_and_emacs_get_a_token_by_their_readmes_from_the_deb(dist, tmp_path):
    try:
        editors_get_a_token("deb", dist, tmp_path)
        # Where Debian's editors look without configuration: :packadd, and site-start.d's load-path.
        user = Installed("deb", "/usr/bin:/bin", "/usr", str(tmp_path / "home"))
        found = user.run("nvim --headless -u NORC -i NONE -n -c 'packadd auth-sidecar' "
                         "-c 'lua io.stdout:write(vim.fn.exists(\":AuthSidecarSignIn\") .. \"\\n\")' -c 'qa!' </dev/null && "
                         "emacs --batch --eval \"(progn (require 'auth-sidecar) (princ (symbol-file 'auth-sidecar-token)))\"")
        assert found.returncode == 0, found.stderr
        assert found.stdout.splitlines() == ["2", "/usr/share/auth-sidecar/emacs/auth-sidecar.el"], found.stdout
    finally:
        remove_deb()
