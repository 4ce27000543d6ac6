#!/bin/sh
# Installs the Etikett Runner as a systemd service. Run as root:
#
#   sudo sh install.sh [--watch-root FOLDER]...
#
# --watch-root names a folder (with everything below it) that deployed flows may watch and
# move files in, besides the Runner's data folder (/var/lib/etikett-runner/data); repeat it for
# more. Give the etikett-runner user read and write access there (e.g.
# setfacl -R -m u:etikett-runner:rwX -m d:u:etikett-runner:rwX FOLDER). Running the script
# again with another list replaces the list. `sh install.sh --print-unit [--watch-root …]`
# prints the systemd unit it would install, and changes nothing.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
prefix=/opt/etikett-runner
state=/var/lib/etikett-runner
roots=""
print_unit=""

refuse() {
    echo "install.sh: $*" >&2
    exit 2
}

add_root() {
    root=$1
    while [ "${root%/}" != "$root" ]; do root=${root%/}; done
    case "$root" in
        /*) ;;
        "") refuse "--watch-root / would hold everything, the Runner's key too" ;;
        *) refuse "--watch-root must be an absolute path: $root" ;;
    esac
    # Names systemd takes literally (no spaces, quotes, % or $) and no . or .. to hide behind.
    case "$root" in
        *[!A-Za-z0-9._/@+-]*) refuse "--watch-root $root: use letters, digits and . _ / @ + - only" ;;
    esac
    case "$root/" in
        */./* | */../* | *//*) refuse "--watch-root $root: no . or .. segments, no //" ;;
    esac
    # The state directory holds the Runner's key: no flow may reach it (the Runner checks too).
    case "$state/" in
        "$root/"*) refuse "--watch-root $root holds the Runner's state directory $state" ;;
    esac
    case "$root/" in
        "$state/"*) refuse "--watch-root $root lies inside the Runner's state directory $state" ;;
    esac
    roots="$roots $root"
}

while [ $# -gt 0 ]; do
    case "$1" in
        --watch-root)
            [ $# -ge 2 ] || refuse "--watch-root needs a folder"
            add_root "$2"
            shift 2
            ;;
        --watch-root=*)
            add_root "${1#--watch-root=}"
            shift
            ;;
        --print-unit)
            print_unit=1
            shift
            ;;
        *) refuse "unknown argument $1 (use --watch-root FOLDER, repeated; --print-unit)" ;;
    esac
done

unit() {
    arguments=""
    paths=""
    for root in $roots; do
        arguments="$arguments --watch-root $root"
        paths="$paths -$root" # "-": a folder not there yet (a share not mounted) is no error
    done
    cat <<UNIT
[Unit]
Description=Etikett Runner
After=network-online.target
Wants=network-online.target

[Service]
User=etikett-runner
ExecStart=$prefix/venv/bin/etikett-runner --config $prefix/config.json --state-dir $state --enrollment-token-file $state/enrollment-token$arguments
Restart=always
# 77: the enrollment was refused; 78: the service removed this Runner. Restarting cannot help.
RestartPreventExitStatus=77 78
RestartSec=5
NoNewPrivileges=true
ProtectSystem=strict
# The only folders it may write: its state directory and the watch roots the site named.
ReadWritePaths=$state$paths

[Install]
WantedBy=multi-user.target
UNIT
}

if [ -n "$print_unit" ]; then
    unit
    exit 0
fi

id -u etikett-runner >/dev/null 2>&1 || useradd --system --home "$state" --shell /usr/sbin/nologin etikett-runner
install -d -m 0755 "$prefix"
# The state directory first, mode 0700 and the Runner user's (also when it existed), then the
# enrollment token into it.
install -d -m 0700 -o etikett-runner "$state"
python3 -m venv "$prefix/venv"
# The engine by its file, never by name from an index: the Runner runs the service's own engine.
"$prefix/venv/bin/pip" install --quiet "$here"/packages/etikett_engine-*.whl "$here/runner"
# celpy's parser tables, made once here: the Runner's user may not write into the venv.
"$prefix/venv/bin/python" -c 'from etikett_engine.cel import parser_tables; parser_tables.write()'
install -m 0644 "$here/ca.pem" "$prefix/ca.pem"
install -m 0644 "$here/config.json" "$prefix/config.json"
install -m 0600 -o etikett-runner "$here/enrollment-token" "$state/enrollment-token"
for root in $roots; do
    [ -d "$root" ] || echo "note: the watch root $root does not exist yet; flows in it wait for it"
done
unit >/etc/systemd/system/etikett-runner.service
systemctl daemon-reload
systemctl enable etikett-runner
systemctl restart etikett-runner # started, or on a reinstall started again with the new unit
echo "Etikett Runner installed; see: journalctl -u etikett-runner -f"
