# SPDX-License-Identifier: LGPL-2.1-or-later
# The cached image is a whole Debian root: pytest must not walk into it looking for tests.
collect_ignore = ["cache", "guest"]
