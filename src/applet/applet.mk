# linkprobe-applet: the desktop's tray icon, menu, notifications and details window. A client of the
# system bus like linkprobectl (it links nothing of the daemon's); GTK 3 for the window and librsvg for
# the icons' pixmaps and the node's picture.
APPLET_PKG_MODULES := gtk+-3.0 librsvg-2.0
DEBIAN_BUILD_PACKAGES += libgtk-3-dev librsvg2-dev
# Under Xvfb a real tray host (xfce4-panel: its systray plugin is a StatusNotifierWatcher and host)
# and a real notification daemon (dunst); xwd and ImageMagick's convert take the screenshots.
DEBIAN_TEST_PACKAGES += xvfb xauth xfce4-panel dunst x11-apps x11-utils imagemagick xdotool librsvg2-bin
# desktop-file-validate: test_applet_install.py checks the .desktop files against the specification.
DEBIAN_TEST_PACKAGES += desktop-file-utils
# setcap: test_applet_desktop.py gives a copy of the applet a file capability (secure-execution mode).
DEBIAN_TEST_PACKAGES += libcap2-bin

PROGRAMS += linkprobe-applet
linkprobe-applet_SOURCES := $(wildcard src/applet/*.c)
linkprobe-applet_LIBS := shared
linkprobe-applet_PKGS := libsystemd json-c inih $(APPLET_PKG_MODULES)
# Only the applet's objects see GTK's flags; the check says what to install before a compiler error would.
APPLET_CFLAGS := $(shell pkg-config --cflags $(APPLET_PKG_MODULES) 2>/dev/null)
$(call objs,$(linkprobe-applet_SOURCES) src/applet/tests/test-applet-text.c): EXTRA_CFLAGS += $(APPLET_CFLAGS)
$(call objs,$(linkprobe-applet_SOURCES) src/applet/tests/test-applet-text.c): | applet-pkgs-present

.PHONY: applet-pkgs-present
applet-pkgs-present:
	@for m in $(APPLET_PKG_MODULES); do pkg-config --exists $$m || missing="$$missing $$m"; done; \
	if [ -n "$$missing" ]; then \
		echo "Missing pkg-config modules:$$missing. Run 'make deps' (as root) to install them." >&2; exit 1; \
	fi

# The text helpers' unit test (escaping of names from the bus, units): cmocka, run by make check.
UNIT_TESTS += test-applet-text
test-applet-text_SOURCES := src/applet/tests/test-applet-text.c src/applet/applet-text.c
test-applet-text_LIBS := shared
test-applet-text_PKGS := glib-2.0 cmocka

APPLET_ICONS := $(wildcard src/applet/data/icons/*.svg)

define install_applet
	install -d $(DESTDIR)$(SYSCONFDIR)/xdg/autostart $(DESTDIR)$(DATADIR)/applications \
		$(DESTDIR)$(DATADIR)/icons/hicolor/scalable/status $(DESTDIR)$(DATADIR)/icons/hicolor/scalable/apps
	install -m 0644 src/applet/data/linkprobe-applet.desktop $(DESTDIR)$(SYSCONFDIR)/xdg/autostart/
	install -m 0644 src/applet/data/linkprobe-applet.desktop $(DESTDIR)$(DATADIR)/applications/
	for f in $(APPLET_ICONS); do n=$$(basename $$f); \
		case $$n in linkprobe.svg|linkprobe-symbolic.svg) d=apps;; *) d=status;; esac; \
		install -m 0644 $$f $(DESTDIR)$(DATADIR)/icons/hicolor/scalable/$$d/; done
endef
define uninstall_applet
	rm -f $(DESTDIR)$(SYSCONFDIR)/xdg/autostart/linkprobe-applet.desktop \
		$(DESTDIR)$(DATADIR)/applications/linkprobe-applet.desktop
	for f in $(APPLET_ICONS); do n=$$(basename $$f); \
		rm -f $(DESTDIR)$(DATADIR)/icons/hicolor/scalable/*/$$n; done
endef

# The same helpers fuzzed (tests/fuzz/fuzz-applet-text.c): names from the bus are untrusted input.
LIBRARIES += applettext
applettext_SOURCES := src/applet/applet-text.c
FUZZ_TARGETS += applet-text
fuzz-applet-text_LIBS := applettext shared
fuzz-applet-text_PKGS := glib-2.0
$(BUILD)/tests/fuzz/fuzz-applet-text.o: EXTRA_CFLAGS += $(APPLET_CFLAGS)
