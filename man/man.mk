# Manual pages (roff), linted by `make check`.
MAN_PAGES += $(wildcard man/*.[1-8])

define install_man
	for m in $(MAN_PAGES); do s=$${m##*.}; install -d $(DESTDIR)$(MANDIR)/man$$s; \
		install -m 0644 $$m $(DESTDIR)$(MANDIR)/man$$s/; done
endef
define uninstall_man
	for m in $(MAN_PAGES); do s=$${m##*.}; rm -f $(DESTDIR)$(MANDIR)/man$$s/$$(basename $$m); done
endef
