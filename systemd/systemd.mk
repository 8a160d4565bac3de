# systemd unit and socket, D-Bus policy, activation and interface files, sysusers.d, udev rule, bash and
# zsh completion and the example configuration. Install paths follow a usrmerged Debian 12; each can be
# overridden on the command line (make install UNITDIR=...).
UNITDIR ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
UDEVRULESDIR ?= $(PREFIX)/lib/udev/rules.d
DBUSPOLICYDIR ?= $(DATADIR)/dbus-1/system.d
DBUSSERVICEDIR ?= $(DATADIR)/dbus-1/system-services
DBUSINTERFACEDIR ?= $(DATADIR)/dbus-1/interfaces
BASHCOMPLETIONDIR ?= $(DATADIR)/bash-completion/completions
# Debian's zsh reads vendor completions from here (and only zsh's own ones from site-functions).
ZSHCOMPLETIONDIR ?= $(DATADIR)/zsh/vendor-completions
CONFDIR ?= $(SYSCONFDIR)/linkprobe
# journalctl --update-catalog reads every *.catalog here.
CATALOGDIR ?= $(PREFIX)/lib/systemd/catalog

# Introspection XML, one file per interface; whoever writes or generates them appends here.
DBUS_INTERFACES += $(wildcard systemd/interfaces/org.linkprobe.LinkProbe1*.xml)

# No tmpfiles.d snippet: StateDirectory=/CacheDirectory= create everything the service writes.
# zsh: test_completion_zsh.py drives the zsh completion.
DEBIAN_TEST_PACKAGES += systemd-container debootstrap zsh

# The unit names the daemon's path, so it is generated per PREFIX: $(BUILD)/build-paths.h (see the
# Makefile) changes only when a directory does, which is what makes a `make install PREFIX=...`
# regenerate the unit.
INSTALL_EXTRA += $(BUILD)/systemd/linkprobed.service

$(BUILD)/systemd/linkprobed.service: systemd/linkprobed.service.in $(BUILD)/build-paths.h
	@mkdir -p $(@D)
	$(call msg,GEN,$@)sed -e 's|@LIBEXECDIR@|$(LIBEXECDIR)|g' -e 's|@BINDIR@|$(BINDIR)|g' \
		-e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' $< > $@.tmp && \
	if grep -q '@[A-Z]*@' $@.tmp; then echo "$@: unsubstituted variable" >&2; rm -f $@.tmp; exit 1; fi && \
	mv $@.tmp $@

# The example configuration is installed only when there is none, and removed only when unmodified.
define install_systemd
	install -d $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(UDEVRULESDIR) \
		$(DESTDIR)$(DBUSPOLICYDIR) $(DESTDIR)$(DBUSSERVICEDIR) $(DESTDIR)$(BASHCOMPLETIONDIR) \
		$(DESTDIR)$(ZSHCOMPLETIONDIR) $(DESTDIR)$(CATALOGDIR) \
		$(DESTDIR)$(CONFDIR)
	install -m 0644 $(BUILD)/systemd/linkprobed.service systemd/linkprobed.socket systemd/linkprobed-private.socket \
		$(DESTDIR)$(UNITDIR)/
	install -m 0644 systemd/linkprobe.sysusers $(DESTDIR)$(SYSUSERSDIR)/linkprobe.conf
	install -m 0644 udev/90-linkprobe.rules $(DESTDIR)$(UDEVRULESDIR)/
	install -m 0644 systemd/org.linkprobe.LinkProbe1.conf $(DESTDIR)$(DBUSPOLICYDIR)/
	install -m 0644 systemd/org.linkprobe.LinkProbe1.service $(DESTDIR)$(DBUSSERVICEDIR)/
	install -m 0644 systemd/linkprobectl.bash $(DESTDIR)$(BASHCOMPLETIONDIR)/linkprobectl
	install -m 0644 systemd/_linkprobectl $(DESTDIR)$(ZSHCOMPLETIONDIR)/_linkprobectl
	install -m 0644 systemd/linkprobe.catalog $(DESTDIR)$(CATALOGDIR)/linkprobe.catalog
	$(if $(strip $(DBUS_INTERFACES)),install -d $(DESTDIR)$(DBUSINTERFACEDIR) && \
		install -m 0644 $(DBUS_INTERFACES) $(DESTDIR)$(DBUSINTERFACEDIR)/)
	test -e $(DESTDIR)$(CONFDIR)/linkprobed.conf || \
		install -m 0644 systemd/linkprobed.conf $(DESTDIR)$(CONFDIR)/linkprobed.conf
endef

define uninstall_systemd
	rm -f $(DESTDIR)$(UNITDIR)/linkprobed.service $(DESTDIR)$(UNITDIR)/linkprobed.socket \
		$(DESTDIR)$(UNITDIR)/linkprobed-private.socket
	rm -f $(DESTDIR)$(SYSUSERSDIR)/linkprobe.conf $(DESTDIR)$(UDEVRULESDIR)/90-linkprobe.rules
	rm -f $(DESTDIR)$(DBUSPOLICYDIR)/org.linkprobe.LinkProbe1.conf
	rm -f $(DESTDIR)$(DBUSSERVICEDIR)/org.linkprobe.LinkProbe1.service
	rm -f $(DESTDIR)$(BASHCOMPLETIONDIR)/linkprobectl $(DESTDIR)$(ZSHCOMPLETIONDIR)/_linkprobectl
	rm -f $(DESTDIR)$(CATALOGDIR)/linkprobe.catalog
	rm -f $(addprefix $(DESTDIR)$(DBUSINTERFACEDIR)/,$(notdir $(DBUS_INTERFACES)))
	! cmp -s systemd/linkprobed.conf $(DESTDIR)$(CONFDIR)/linkprobed.conf || \
		rm -f $(DESTDIR)$(CONFDIR)/linkprobed.conf
	-rmdir $(DESTDIR)$(CONFDIR) 2>/dev/null
endef
