#!/usr/bin/env python3
"""Per-class mutation scores of a PIT run, and of several runs on the same main code taken together.

usage: union.py BEFORE/mutations.xml [AFTER/mutations.xml ...] [-v]

BEFORE is a run against the tests that existed; each AFTER a run of the same target classes (or some of them)
against other tests, new ones or ones the first run left out.
A mutant is matched across the runs by class, method, line, mutator, description, index and block (the main
code must be the same in all), and counts as killed after if any run killed it (KILLED, TIMED_OUT,
MEMORY_ERROR, RUN_ERROR). -v lists the mutants still alive (SURVIVED or NO_COVERAGE in every run).
A partial mutations.xml (a run stopped early) is read as far as it goes.
"""
import collections
import re
import sys

KILLED = ('KILLED', 'TIMED_OUT', 'MEMORY_ERROR', 'RUN_ERROR')


def mutants(path):
    text = open(path).read()
    found = {}
    for m in re.finditer(r"<mutation ([^>]*)>(.*?)</mutation>", text, re.S):
        attrs = dict(re.findall(r'(\w+)=[\'"]([^\'"]*)[\'"]', m.group(1)))
        body = m.group(2)

        def field(name):
            hit = re.search(r"<%s>(.*?)</%s>" % (name, name), body, re.S)
            return hit.group(1) if hit else ''

        key = (field('mutatedClass').split('.')[-1], field('mutatedMethod'), field('lineNumber'),
               field('mutator').split('.')[-1], field('description'), field('indexes'), field('blocks'))
        found[key] = attrs.get('status')
    return found


def main(args):
    verbose = '-v' in args
    files = [a for a in args if a != '-v']
    before = mutants(files[0])
    after = {}
    for later in files[1:]:
        for key, status in mutants(later).items():
            if after.get(key) not in KILLED:
                after[key] = status
    per_class = collections.defaultdict(lambda: [0, 0, 0])
    alive = []
    for key, status in before.items():
        row = per_class[key[0]]
        row[0] += 1
        row[1] += status in KILLED
        if status in KILLED or after.get(key) in KILLED:
            row[2] += 1
        else:
            alive.append((key, status, after.get(key)))
    total = [0, 0, 0]
    for cls, (n, killed_before, killed_after) in sorted(per_class.items()):
        print(f"{cls:20s} {n:4d} mutants  before {killed_before:4d} ({100 * killed_before / n:5.1f}%)"
              f"  after {killed_after:4d} ({100 * killed_after / n:5.1f}%)")
        total = [t + v for t, v in zip(total, (n, killed_before, killed_after))]
    if total[0]:
        print(f"{'all':20s} {total[0]:4d} mutants  before {total[1]:4d} ({100 * total[1] / total[0]:5.1f}%)"
              f"  after {total[2]:4d} ({100 * total[2] / total[0]:5.1f}%)")
    unmatched = sum(1 for k in after if k not in before)
    if unmatched:
        print(f"{unmatched} mutant(s) of the later runs are not in the first (a partial run, or other code)")
    if verbose:
        for key, status, later in alive:
            print(status, later or '-', *key[:4], '|', key[4].replace('&lt;', '<').replace('&gt;', '>'))


if __name__ == '__main__':
    main(sys.argv[1:])
