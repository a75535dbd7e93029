# debian.sh is sourced by the scripts that install what they need from
# Debian's packages (the package sources are the machine's own apt
# configuration). Make targets run in parallel, and each may install
# something: installs are serialised on one lock of ours, and apt-get waits
# for dpkg's own lock (held by anything else, such as unattended upgrades)
# instead of failing at once.

# can_apt reports whether this script may install packages: root, on a
# machine with apt-get.
can_apt() { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; }

# apt_install installs the named packages without their recommendations.
apt_install() {
  (
    flock -w 900 9 || { echo "apt_install: another install held the lock for 15 minutes" >&2; exit 1; }
    apt-get -o DPkg::Lock::Timeout=600 update -qq &&
      DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "$@" >/dev/null
  ) 9>/var/lock/tickerdesk-apt.lock
}
