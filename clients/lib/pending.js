// Tests of behaviour that an open issue will bring. Such a test still runs,
// and its outcome is inverted: it must fail (the failure is printed as a
// diagnostic), and once it passes it fails the run until its pending(...)
// is removed. The project's Go runners keep testdata/conformance/PENDING
// the same way; nothing is ever skipped.
//
//   test('…', T, pending('#17 AI SDK 7 abort part (SPEC 5.2)', async () => { … }));

export function pending(issue, fn) {
  return async (t) => {
    let failure;
    try {
      await fn(t);
    } catch (err) {
      failure = err;
    }
    if (!failure) throw new Error(`passes now: remove pending('${issue}') from this test`);
    t.diagnostic(`pending (${issue}), fails as expected: ${String(failure?.message ?? failure).split('\n')[0]}`);
  };
}
