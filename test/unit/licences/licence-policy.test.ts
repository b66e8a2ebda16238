// The licence policy's decisions: which npm licences and which Go licence
// texts pass the gate.
import { expect } from 'chai';
import { goLicenceFamily, refusedGoModules, refusedNpmPackages } from '../../licences/licence-policy.ts';

const agplHeader = 'GNU AFFERO GENERAL PUBLIC LICENSE\n Version 3, 19 November 2007\n\n Copyright (C) 2007 Free Software Foundation, Inc.';
const apacheHeader =
  '                                 Apache License\n                           Version 2.0, January 2004\n                        http://www.apache.org/licenses/';
const mitBody = 'Permission is hereby granted, free of charge, to any person obtaining a copy of this software';

describe('licence policy', () => {
  it('passes permissive npm licences and SPDX choices that include one', () => {
    expect(
      refusedNpmPackages([
        { id: 'a@1.0.0', licences: ['MIT'], direct: true },
        { id: 'b@1.0.0', licences: ['(MIT OR CC0-1.0)'], direct: false },
        { id: 'c@1.0.0', licences: ['Apache-2.0'], direct: true },
        { id: 'd@1.0.0', licences: ['(GPL-3.0-only OR MIT)'], direct: true },
      ]),
    ).to.deep.equal([]);
  });

  it('refuses copyleft, missing, unknown and guessed licences, naming the package', () => {
    const refused = refusedNpmPackages([
      { id: 'agpl@1.0.0', licences: ['AGPL-3.0-only'], direct: true },
      { id: 'none@1.0.0', licences: [], direct: false },
      { id: 'custom@1.0.0', licences: ['Custom: https://example.invalid/terms'], direct: true },
      { id: 'guessed@1.0.0', licences: ['MIT*'], direct: true },
      { id: 'both@1.0.0', licences: ['MIT AND GPL-2.0-only'], direct: true },
    ]);
    expect(refused.map((r) => r.id)).to.deep.equal(['agpl@1.0.0', 'none@1.0.0', 'custom@1.0.0', 'guessed@1.0.0', 'both@1.0.0']);
    expect(refused[1]?.reason).to.equal('declares no licence');
  });

  it("allows Python's licence only for a package the project does not depend on directly", () => {
    expect(refusedNpmPackages([{ id: 'argparse@2.0.1', licences: ['Python-2.0'], direct: false }])).to.deep.equal([]);
    expect(refusedNpmPackages([{ id: 'argparse@2.0.1', licences: ['Python-2.0'], direct: true }])).to.have.length(1);
  });

  it('recognises licence texts, copyleft before the permissive texts they may quote', () => {
    expect(goLicenceFamily(apacheHeader)).to.equal('Apache-2.0');
    expect(goLicenceFamily(mitBody)).to.equal('MIT');
    expect(goLicenceFamily(agplHeader)).to.equal('AGPL');
    expect(goLicenceFamily(`${agplHeader}\n${mitBody}`)).to.equal('AGPL');
    expect(goLicenceFamily('Business Source License 1.1')).to.equal('BUSL');
    expect(goLicenceFamily('  \n')).to.equal('none');
    expect(goLicenceFamily('All rights reserved.')).to.equal('unknown');
  });

  it('refuses a Go module under AGPL or without a licence, naming its build script', () => {
    const refused = refusedGoModules([
      { module: 'example.invalid/agpl@v1.0.0', script: 'bench/x.sh', text: agplHeader },
      { module: 'example.invalid/bare@v1.0.0', script: 'test/y.sh', text: '' },
      { module: 'example.invalid/ok@v1.0.0', script: 'test/z.sh', text: apacheHeader },
    ]);
    expect(refused.map((r) => r.id)).to.deep.equal(['example.invalid/agpl@v1.0.0', 'example.invalid/bare@v1.0.0']);
    expect(refused[0]?.reason).to.contain('AGPL').and.contain('bench/x.sh');
    expect(refused[1]?.reason).to.contain('no licence file');
  });
});
