#!/usr/bin/env python3
"""Run a command with a different timer slack: with_timer_slack.py NANOSECONDS COMMAND...

Linux lets a process widen its timer slack (prctl PR_SET_TIMERSLACK); children inherit it
across fork and exec. A 1 ms sleep then wakes up to SLACK later, like Windows' default 15.6 ms
timer resolution made NUnit's Thread.Sleep(1) cost 15.6 ms per test in NUnit 3.4 on Windows.
"""
import ctypes, os, sys

PR_SET_TIMERSLACK = 29
slack_ns = int(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(PR_SET_TIMERSLACK, ctypes.c_ulong(slack_ns), 0, 0, 0) != 0:
    sys.exit(f"prctl(PR_SET_TIMERSLACK) failed: {os.strerror(ctypes.get_errno())}")
os.execvp(sys.argv[2], sys.argv[2:])
