# systemd unit, D-Bus policy and activation, sysusers/tmpfiles, udev rule.
install_systemd =
uninstall_systemd =
