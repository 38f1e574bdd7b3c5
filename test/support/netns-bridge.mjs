// Runs inside a network namespace of its own (`unshare --net`), where only its loopback exists, and
// joins it to the test's namespace through unix sockets, which a network namespace does not fence:
//   `in:PORT`  listens on 127.0.0.1:PORT here and forwards to the socket DIR/in-PORT.sock (the test
//              listens there and forwards to 127.0.0.1:PORT on its side: the emulator, a fake API);
//   `out:PORT` listens on the socket DIR/out-PORT.sock and forwards to 127.0.0.1:PORT here (what the
//              test probes: a command's port, bound as the README says, 0.0.0.0:8080 included).
// Writes DIR/ready (its pid) once every listener is up. Usage: node netns-bridge.mjs DIR SPEC...
import { writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';

const [dir = '', ...specs] = process.argv.slice(2);
const pipe = (from, to) => {
  from.on('error', () => to.destroy());
  to.on('error', () => from.destroy());
  from.pipe(to).pipe(from);
};
const listeners = specs.map((spec) => {
  const [way, port] = spec.split(':');
  const socket = join(dir, `${way}-${port}.sock`);
  const server =
    way === 'in'
      ? net.createServer((c) => pipe(c, net.connect(socket)))
      : net.createServer((c) => pipe(c, net.connect(Number(port), '127.0.0.1')));
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    if (way === 'in') server.listen(Number(port), '127.0.0.1', resolve);
    else server.listen(socket, resolve);
  });
});
await Promise.all(listeners);
writeFileSync(join(dir, 'ready'), String(process.pid));
