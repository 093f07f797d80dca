// Preloaded into Portkey's gateway (node --import) by bench/e2e -peers: the
// gateway's server (@hono/node-server) listens on every interface and has
// no option for the address, and a benchmark binds 127.0.0.1 only. A
// listen(port) or listen(port, undefined, callback) is given the loopback
// address; a listen that names an address is left as it is.
import net from 'node:net';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' && typeof args[1] !== 'string') {
    if (args.length >= 2 && args[1] === undefined) {
      args[1] = '127.0.0.1';
    } else {
      args.splice(1, 0, '127.0.0.1');
    }
  }
  return listen.apply(this, args);
};
