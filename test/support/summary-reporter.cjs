// Mocha's spec reporter plus one closing line in the plain form CI reads:
// "tests: N passed, N failed, N skipped", followed, when tests were skipped,
// by why: each skipped test's nearest suite carrying a reason set by
// test/support/skip-unless-found.ts (`tenantrySkipReason`), else "no reason given".
const Mocha = require('mocha');

/** The reason recorded on the test's nearest suite, if any. */
function skipReason(test) {
  for (let suite = test.parent; suite; suite = suite.parent) {
    if (typeof suite.tenantrySkipReason === 'string') return suite.tenantrySkipReason;
  }
  return 'no reason given';
}

class SummaryReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const reasons = new Map();
    runner.on(Mocha.Runner.constants.EVENT_TEST_PENDING, (test) => {
      const reason = skipReason(test);
      reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
    });
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
      const { passes, failures, pending } = this.stats;
      const why = [...reasons].map(([reason, n]) => `${n} ${reason}`).join('; ');
      process.stdout.write(`\ntests: ${passes} passed, ${failures} failed, ${pending} skipped${why === '' ? '' : ` (${why})`}\n`);
    });
  }
}

module.exports = SummaryReporter;
