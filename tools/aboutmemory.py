#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""aboutmemory.py - loads an about:memory JSON report in a real headless
Firefox and checks what it draws.

usage: aboutmemory.py FIREFOX REPORT.json [SCREENSHOT.png]

Starts FIREFOX (headless, a fresh profile, Marionette on a free port of
127.0.0.1), opens about:memory?file=REPORT.json, waits for the tree, and
asserts on the page's text: the explicit tree holds atomtab's entries, the
process's size in the treemap (which about:memory reads from
resident-unique) is a number, not "NaN", and no warning about invalid
input is shown. With SCREENSHOT it saves a PNG of the rendered report.
Exits 0 when every check holds, 1 when one fails, 3 when Firefox could not
be started or driven (the caller reports a skip).

Marionette's protocol is spoken directly (no client library): each message
is "LENGTH:JSON"; a command is [0, id, name, params], its answer
[1, id, error, result].
"""
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

CANNOT_DRIVE = 3


class Marionette:
    def __init__(self, port, timeout):
        self.sock = socket.create_connection(('127.0.0.1', port), timeout=timeout)
        self.buf = b''
        self.next_id = 1
        hello = self.read()
        if hello.get('marionetteProtocol', 0) < 3:
            raise RuntimeError('unexpected Marionette greeting: %r' % hello)

    def read(self):
        while b':' not in self.buf:
            self.recv()
        length, _, rest = self.buf.partition(b':')
        n = int(length)
        self.buf = rest
        while len(self.buf) < n:
            self.recv()
        msg, self.buf = self.buf[:n], self.buf[n:]
        return json.loads(msg.decode('utf-8'))

    def recv(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise RuntimeError('Marionette closed the connection')
        self.buf += chunk

    def call(self, name, params=None):
        msg_id = self.next_id
        self.next_id += 1
        data = json.dumps([0, msg_id, name, params or {}]).encode('utf-8')
        self.sock.sendall(str(len(data)).encode('ascii') + b':' + data)
        while True:
            reply = self.read()
            if reply[0] == 1 and reply[1] == msg_id:
                break
        if reply[2]:
            raise RuntimeError('%s: %s' % (name, reply[2].get('message', reply[2])))
        result = reply[3]
        return result.get('value', result) if isinstance(result, dict) else result


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def start_firefox(firefox, profile, port, log):
    with open(os.path.join(profile, 'user.js'), 'w') as f:
        for pref, value in [('marionette.port', port),
                            ('browser.shell.checkDefaultBrowser', False),
                            ('browser.startup.homepage_override.mstone', 'ignore'),
                            ('datareporting.policy.dataSubmissionEnabled', False),
                            ('toolkit.telemetry.reportingpolicy.firstRun', False),
                            ('app.update.disabledForTesting', True),
                            ('network.proxy.type', 0)]:
            f.write('user_pref(%s, %s);\n' % (json.dumps(pref), json.dumps(value)))
    env = dict(os.environ, MOZ_HEADLESS='1', MOZ_HEADLESS_WIDTH='1280',
               MOZ_HEADLESS_HEIGHT='1400')
    return subprocess.Popen([firefox, '--headless', '--marionette', '--remote-allow-system-access',
                             '--no-remote',
                             '--profile', profile, 'about:blank'],
                            stdout=log, stderr=subprocess.STDOUT, env=env)


def connect(port, proc, deadline):
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError('Firefox exited with status %d' % proc.returncode)
        try:
            return Marionette(port, timeout=30)
        except OSError:
            time.sleep(0.5)
    raise RuntimeError('no Marionette on port %d' % port)


def open_about_memory(m, url):
    """Opens url in the current tab. Marionette refuses to navigate content
    to a privileged page, so the browser's chrome loads it, as a link the
    user opened; the checks then read the page from content again."""
    m.call('Marionette:SetContext', {'value': 'chrome'})
    m.call('WebDriver:ExecuteScript', {
        'script': 'openTrustedLinkIn(arguments[0], "current");', 'args': [url]})
    m.call('Marionette:SetContext', {'value': 'content'})


def page_text(m, deadline):
    """The page's text once about:memory has drawn the report."""
    text = ''
    while time.time() < deadline:
        text = m.call('WebDriver:ExecuteScript', {
            'script': 'return document.body ? document.body.innerText : "";',
            'args': []}) or ''   # null while the page is being replaced
        if 'Explicit Allocations' in text and 'Total resident memory' in text:
            return text
        if 'Invalid memory report' in text:
            return text
        time.sleep(0.5)
    return text


def check(text, process):
    failures = []
    for want in ('Explicit Allocations', 'atom-objects', 'heap-unclassified',
                 'Other Measurements', 'resident-unique', process):
        if want not in text:
            failures.append('the page lacks %r' % want)
    if 'NaN' in text:
        failures.append('the page shows NaN')
    if 'Invalid memory report' in text:
        failures.append('about:memory rejected the file')
    total = [line for line in text.splitlines() if 'Total resident memory' in line]
    if not total or 'MB' not in total[0]:
        failures.append('no process size in the treemap: %r' % total)
    return failures


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__.split('\n\n')[1], file=sys.stderr)
        return 2
    firefox, report = sys.argv[1], os.path.abspath(sys.argv[2])
    shot = sys.argv[3] if len(sys.argv) == 4 else None
    with open(report) as f:
        process = json.load(f)['reports'][0]['process']
    profile = tempfile.mkdtemp(prefix='aboutmemory-')
    log_path = os.path.join(profile, 'firefox.log')
    proc = None
    try:
        with open(log_path, 'w') as log:
            port = free_port()
            proc = start_firefox(firefox, profile, port, log)
            try:
                m = connect(port, proc, time.time() + 90)
                m.call('WebDriver:NewSession', {'capabilities': {}})
                m.call('WebDriver:SetWindowRect', {'width': 1280, 'height': 1400})
                open_about_memory(m, 'about:memory?file=' + report)
                text = page_text(m, time.time() + 60)
            except (OSError, RuntimeError, ValueError) as e:
                with open(log_path) as f:
                    tail = f.read()[-2000:]
                print('aboutmemory: cannot drive Firefox: %s\n%s' % (e, tail), file=sys.stderr)
                return CANNOT_DRIVE
            failures = check(text, process)
            if shot:
                png = m.call('WebDriver:TakeScreenshot', {'full': False, 'hash': False})
                with open(shot, 'wb') as f:
                    f.write(base64.b64decode(png))
            try:
                m.call('Marionette:Quit', {'flags': ['eForceQuit']})
            except (OSError, RuntimeError):
                pass
        if failures:
            print('aboutmemory: FAILED:\n  ' + '\n  '.join(failures), file=sys.stderr)
            print('--- page text ---\n' + text, file=sys.stderr)
            return 1
        size = [line for line in text.splitlines() if 'Total resident memory' in line][0]
        print('aboutmemory: about:memory drew the report: %s' % size.strip())
        return 0
    finally:
        if proc and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main())
