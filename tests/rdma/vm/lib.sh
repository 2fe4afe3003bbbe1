# Soft-RoCE VM harness, shared part: fetches Debian's kernel (never installed on the host), builds a busybox
# initramfs, and boots qemu with the host's /usr and /etc over 9p. Everything is cached under one folder
# ($vm_cache, normally <build>/rdma-vm) keyed by the kernel's version, so a rerun only boots.
# Sourced by run-in-vm; functions print progress on stderr and fail with a message.

vm_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

vm_die() {
  echo "rdma-vm: $*" >&2
  exit 2
}

# The ABI package that linux-image-amd64 depends on, e.g. linux-image-6.1.0-57-amd64.
vm_kernel_package() {
  apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}'
}

# Downloads and unpacks the kernel into $vm_cache/kernel-<version>/: unpacked/ (the package's files, modules
# indexed by depmod), vmlinux (the bzImage's xz payload as an ELF, which qemu boots through PVH without
# decompressing under emulation) and kver. Sets vm_kdir.
vm_kernel() {
  local pkg
  pkg=$(vm_kernel_package)
  [ -n "$pkg" ] || vm_die "apt-cache knows no linux-image-amd64 dependency (is this Debian with apt lists?)"
  vm_kdir=$vm_cache/${pkg#linux-image-}
  [ -f "$vm_kdir/ready" ] && [ -d "$vm_kdir/unpacked" ] && return 0
  echo "rdma-vm: fetching $pkg" >&2
  rm -rf "$vm_kdir" && mkdir -p "$vm_kdir"
  (cd "$vm_kdir" && apt-get download "$pkg" >download.log 2>&1) || { cat "$vm_kdir/download.log" >&2; vm_die "apt-get download $pkg failed"; }
  dpkg-deb -x "$vm_kdir"/*.deb "$vm_kdir/unpacked" || vm_die "dpkg-deb -x failed"
  rm -f "$vm_kdir"/*.deb
  local kver
  kver=$(ls "$vm_kdir/unpacked/lib/modules" | head -1)
  depmod -b "$vm_kdir/unpacked" "$kver" || vm_die "depmod failed"
  local bz=$vm_kdir/unpacked/boot/vmlinuz-$kver off
  # The payload starts at the first xz stream header (FD '7zXZ' 00) inside the bzImage.
  off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$bz" | head -1 | cut -d: -f1)
  [ -n "$off" ] || vm_die "no xz payload in $bz (CONFIG_KERNEL_XZ expected)"
  tail -c +$((off + 1)) "$bz" | xz -dc --single-stream >"$vm_kdir/vmlinux" 2>/dev/null || true  # tail: SIGPIPE
  [ "$(head -c 4 "$vm_kdir/vmlinux" | od -An -c | tr -d ' ')" = "177ELF" ] || vm_die "the xz payload of $bz is no ELF"
  echo "$kver" >"$vm_kdir/kver"
  touch "$vm_kdir/ready"
}

# The initramfs: static busybox, /init, and the modules that 9p and overlay need (in load order).
vm_initramfs() {
  local kver
  kver=$(cat "$vm_kdir/kver")
  vm_initrd=$vm_kdir/initramfs.cpio.gz
  [ "$vm_initrd" -nt "$vm_here/init" ] && [ "$vm_initrd" -nt "$vm_here/lib.sh" ] && return 0
  local bb
  bb=$(command -v busybox) || vm_die "busybox not found (apt-get install busybox-static)"
  file -L "$bb" 2>/dev/null | grep -q 'statically linked' || [ -x /bin/busybox ] || vm_die "$bb is not static"
  local dir=$vm_kdir/initramfs
  rm -rf "$dir" && mkdir -p "$dir"/{.bb,.mods,dev,proc,sys,usr,etc,tmp,run,root,mnt}
  cp "$bb" "$dir/.bb/busybox"
  cp "$vm_here/init" "$dir/init" && chmod +x "$dir/init"
  for l in bin sbin lib lib64; do ln -s "usr/$l" "$dir/$l"; done
  local m
  for m in virtio_pci 9pnet_virtio 9p overlay; do
    modprobe -d "$vm_kdir/unpacked" -S "$kver" --show-depends "$m" || vm_die "modprobe --show-depends $m failed"
  done | awk '$1 == "insmod" && !seen[$2]++ {print $2}' >"$dir/.mods/order.full"
  : >"$dir/.mods/order"
  while read -r m; do
    cp "$m" "$dir/.mods/" && basename "$m" >>"$dir/.mods/order"
  done <"$dir/.mods/order.full"
  rm "$dir/.mods/order.full"
  (cd "$dir" && find . | cpio -o -H newc --quiet | gzip -1) >"$vm_initrd.tmp" && mv "$vm_initrd.tmp" "$vm_initrd"
}

# Boots the VM. The guest mounts, by 9p tag: usr and etc (the host's, read-only, under a tmpfs overlay),
# mods (the unpacked modules), src (read-only) at $vm_src and work (read-write) at $vm_work, both at the
# host's paths; it runs $vm_run/cmd (vm_run lies under vm_work) and leaves stdout, stderr and status there.
# $1: seconds before the host gives up on the guest.
vm_boot() {
  local timeout=$1 accel
  accel=${RDMA_VM_ACCEL:-tcg}  # tcg: the tests' timeouts are sized for emulation
  local share=() spec tag path ro
  for spec in usr=/usr=ro etc=/etc=ro mods="$vm_kdir/unpacked/lib/modules"=ro src="$vm_src"=ro work="$vm_work"=rw; do
    IFS== read -r tag path ro <<<"$spec"
    [ -n "$path" ] || continue
    share+=(-fsdev "local,id=$tag,path=$path,security_model=none$([ "$ro" = ro ] && echo ,readonly=on)"
            -device "virtio-9p-pci,fsdev=$tag,mount_tag=$tag")
  done
  timeout --kill-after=5 "$timeout" qemu-system-x86_64 -accel "$accel" -cpu "$([ "$accel" = kvm ] && echo host || echo max)" -smp "${RDMA_VM_CPUS:-2}" \
    -m "${RDMA_VM_MEM:-2G}" -nic none -nographic -no-reboot -monitor none \
    -serial "file:$vm_run/console.log" \
    -kernel "$vm_kdir/vmlinux" -initrd "$vm_initrd" \
    -append "console=ttyS0 quiet loglevel=3 panic=-1 tsc=reliable no_timer_check rdinit=/init myriad.src=$vm_src myriad.work=$vm_work myriad.run=$vm_run" \
    "${share[@]}" </dev/null >"$vm_run/qemu.log" 2>&1
}
