# Run by the flux-installer init container of TrainJob {{.Job}}, from the
# Flux view image: it writes this TrainJob's broker configuration and host
# list into the shared volume {{.Root}}, and copies Flux there for the
# training container, whose image has none. Written by Trainforge's Flux
# plugin.
set -eu

root={{.Root}}
config=$root/config
echo "Preparing Flux on $(hostname)"

mkdir -p "$config/etc/flux/config" "$config/etc/flux/system/cron.d" \
  "$config/etc/curve" "$config/var/lib/flux" "$config/run/flux" "$root/view"

# The brokers of the TrainJob's pods, as a Flux hostlist.
echo '{{.Hosts}}' > "$config/etc/flux/system/hostlist"

cat > "$config/etc/flux/config/broker.toml" <<'BROKER_TOML'
{{.Broker}}BROKER_TOML
echo "Flux broker configuration:"
cat "$config/etc/flux/config/broker.toml"

# The view is a Spack view whose links point into /opt/software: the
# training container mounts a copy of it there.
for view in /opt/views/._view/*; do
  cp -R "$view"/. "$root/view/"
done
cp -R /opt/software "$root/"

touch "$root/flux-operator-done.txt"
echo "Flux is ready in $root"
