#!/bin/sh
# disks: sas1:hdd:256M:scsi
# boots: 2
# SCSI disk: hdparm cannot switch its cache (it says "not supported" and exits 0); hyraid uses
# sdparm, and its udev rule makes the setting survive a reboot (QEMU boots the cache on again).
. /mnt/host/files/guest-lib.sh
dev=/dev/$(lsblk -dno NAME,SERIAL | awk '$2=="HYSAS1"{print $1}')
ct() { cat /sys/block/${dev#/dev/}/device/scsi_disk/*/cache_type; }
if [ "$HYRAID_BOOT" = 1 ]; then
    expect "cache on at first boot (cache_type)" "$(ct)" "write back"
    hy apply $CFG/scsi-cache.yaml --yes; expect "apply exits 0" $? 0
    grep -q "sdparm --clear=WCE" /tmp/hy.out && ok "switched with sdparm" || bad "no sdparm in the apply"
    expect "cache off now (cache_type)" "$(ct)" "write through"
    expect "sdparm reads WCE 0" "$(sdparm --get=WCE $dev 2>/dev/null | awk '$1=="WCE"{print $2}')" 0
    finish
fi
expect "cache off again after the reboot: hyraid's udev rule ran sdparm (cache_type)" "$(ct)" "write through"
expect "plan after the reboot exits 0" "$(hy_rc plan $CFG/scsi-cache.yaml --detailed-exitcode)" 0
finish
