#!/bin/sh
# SPDX-License-Identifier: MIT
# readme-example.sh - prints the C example from README.md (the ```c block
# after the "<!-- example -->" marker), so the tests compile and run it.
awk '/<!-- example -->/ {armed=1; next}
     armed && /^```c/ {inside=1; next}
     inside && /^```/ {exit}
     inside {print}' "${1:-README.md}"
