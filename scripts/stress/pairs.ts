/** Queue pairs for the stress runners: a Result's value or a throw, two queue pairs connected. */
import { Qp, type Nic, type Result } from '../../lib/index.ts';

/** The value of an Ok result; throws with `what` and the message of an Error. */
export function must<T>(r: Result<T>, what: string): T {
  if (!r.ok) throw new Error(`${what}: ${r.error}`);
  return r.value;
}

/** Two queue pairs connected to each other (on one NIC, or on two). */
export function connectedPair(nicA: Nic, nicB: Nic = nicA): [Qp, Qp] {
  const a = must(Qp.make(nicA), 'Qp.make a');
  const b = must(Qp.make(nicB), 'Qp.make b');
  must(a.connect(b.endpoint), 'connect a');
  must(b.connect(a.endpoint), 'connect b');
  return [a, b];
}
