import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  bitString, boolean, contents, decodeBitString, decodeBoolean, decodeIntegerBytes, decodeNamedBits, decodeOID,
  decodeSmallInteger, decodeString, decodeTime, DERError, DERReader, integer, namedBits, octetString, oid, readSingle,
  sequence, setOf, TAG, time, tlv, utf8String,
} from './der.ts';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'certsmith-der-'));
process.on('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));

/** DER as OpenSSL's ASN1_generate_nconf produces it, the reference for byte-exactness. */
function opensslDER(genstr: string): string {
  const out = path.join(tmp, 'gen.der');
  execFileSync('openssl', ['asn1parse', '-genstr', genstr, '-noout', '-out', out]);
  return fs.readFileSync(out).toString('hex');
}

const hex = (b: Buffer) => b.toString('hex');
const el = (h: string) => readSingle(Buffer.from(h, 'hex'), Buffer.from(h, 'hex')[0], 'test');

test('primitives encode byte-for-byte as OpenSSL encodes them', () => {
  assert.equal(hex(integer(0)), opensslDER('INTEGER:0'));
  assert.equal(hex(integer(127)), opensslDER('INTEGER:127'));
  assert.equal(hex(integer(128)), opensslDER('INTEGER:128'));
  assert.equal(hex(integer(65535)), opensslDER('INTEGER:65535'));
  // A magnitude with leading zeros and the top bit set: trimmed, then one 0x00 so it stays positive.
  assert.equal(hex(integer(Buffer.from('0000ff01', 'hex'))), opensslDER('INTEGER:0xff01'));
  assert.equal(hex(oid('2.999.3')), opensslDER('OID:2.999.3'));
  assert.equal(hex(oid('1.2.840.113549.1.9.14')), opensslDER('OID:1.2.840.113549.1.9.14'));
  assert.equal(hex(oid('0.9.2342.19200300.100.1.25')), opensslDER('OID:0.9.2342.19200300.100.1.25'));
  assert.equal(hex(boolean(true)), opensslDER('BOOLEAN:TRUE'));
  assert.equal(hex(namedBits([0, 2])), opensslDER('FORMAT:BITLIST,BITSTRING:0,2'));
  assert.equal(hex(namedBits([8])), opensslDER('FORMAT:BITLIST,BITSTRING:8'));
  assert.equal(hex(namedBits([5, 6])), opensslDER('FORMAT:BITLIST,BITSTRING:5,6'));
  assert.equal(hex(namedBits([])), '030100');
  assert.equal(hex(utf8String('Grüße')), opensslDER('FORMAT:UTF8,UTF8String:Grüße'));
});

test('times follow RFC 5280: UTCTime through 2049, GeneralizedTime from 2050 and before 1950, whole seconds', () => {
  assert.equal(hex(time(new Date('2049-12-31T23:59:59.999Z'))), opensslDER('UTCTIME:491231235959Z'));
  assert.equal(hex(time(new Date('2050-01-01T00:00:00Z'))), opensslDER('GENTIME:20500101000000Z'));
  assert.equal(hex(time(new Date('1950-01-01T00:00:00Z'))), opensslDER('UTCTIME:500101000000Z'));
  assert.equal(hex(time(new Date('1949-12-31T23:59:59Z'))), opensslDER('GENTIME:19491231235959Z'));
  for (const iso of ['1950-01-01T00:00:00.000Z', '1999-02-28T12:00:00.000Z', '2000-02-29T00:00:00.000Z', '2049-12-31T23:59:59.000Z',
    '2050-01-01T00:00:00.000Z', '9999-12-31T23:59:59.000Z', '0050-06-01T00:00:00.000Z']) {
    const der = time(new Date(iso));
    assert.equal(decodeTime(readSingle(der, der[0], 'time')).toISOString(), iso);
  }
  const bad = ['170d3439313233313233353935395a'.replace(/5a$/, '2b'), // not Zulu
    Buffer.from([0x17, 11, ...Buffer.from('4912312359Z')]).toString('hex'), // no seconds
    Buffer.from([0x17, 13, ...Buffer.from('490230000000Z')]).toString('hex'), // 30 February
    Buffer.from([0x18, 19, ...Buffer.from('20500101000000.5Z')]).toString('hex').replace(/^1813/, '1811'),
    Buffer.from([0x17, 13, ...Buffer.from('49123124000aZ')]).toString('hex')];
  for (const h of bad) assert.throws(() => decodeTime(el(h)), DERError, h);
});

test('integers, OIDs, booleans and bit strings decode and insist on DER', () => {
  for (const n of [0, 1, 127, 128, 255, 256, 65535, 2 ** 40]) assert.equal(decodeSmallInteger(el(hex(integer(n)))), n);
  assert.throws(() => decodeIntegerBytes(el('0202007f')), /non-minimal INTEGER/);
  assert.throws(() => decodeIntegerBytes(el('0202ff80')), /non-minimal INTEGER/);
  assert.throws(() => decodeIntegerBytes(el('0200')), /empty INTEGER/);
  assert.throws(() => decodeSmallInteger(el('0201ff')), /negative/);
  for (const o of ['2.5.29.17', '1.2.840.10045.4.3.2', '2.999.3', '0.9.2342.19200300.100.1.1', '1.3.6.1.4.1.311.20.2.3']) {
    assert.equal(decodeOID(el(hex(oid(o)))), o);
  }
  assert.throws(() => decodeOID(el('06025588')), /truncated OBJECT IDENTIFIER/);
  assert.throws(() => decodeOID(el('0603558001')), /non-minimal/);
  assert.throws(() => oid('1.40.1'), /malformed/);
  assert.throws(() => oid('not.an.oid'), /malformed/);
  assert.equal(decodeBoolean(el('0101ff')), true);
  assert.equal(decodeBoolean(el('010100')), false);
  assert.throws(() => decodeBoolean(el('010101')), /0xFF/);
  assert.deepEqual(decodeNamedBits(el(hex(namedBits([0, 2, 5, 8])))), [0, 2, 5, 8]);
  assert.throws(() => decodeBitString(el('030201ff')), /padding bits not zero/);
  assert.throws(() => decodeBitString(el('030108')), /padding/);
  assert.deepEqual(decodeBitString(el(hex(bitString(Buffer.from('abcd', 'hex'))))).bytes, Buffer.from('abcd', 'hex'));
});

test('strings decode from every X.509 DirectoryString type', () => {
  assert.equal(decodeString(el(hex(utf8String('東京 ü')))), '東京 ü');
  assert.equal(decodeString(el(opensslDER('BMPSTRING:Tokyo'))), 'Tokyo');
  assert.equal(decodeString(el(opensslDER('UNIVERSALSTRING:abc'))), 'abc');
  assert.equal(decodeString(el(opensslDER('IA5STRING:a@b'))), 'a@b');
  assert.equal(decodeString(el(opensslDER('PRINTABLESTRING:Example'))), 'Example');
  assert.equal(decodeString(el(hex(integer(5)))), undefined);
  assert.throws(() => decodeString(el('1e03004100')), /odd length/);
});

test('lengths: short and long form, minimal, bounded by the input', () => {
  for (const n of [0, 1, 127, 128, 255, 256, 65535, 65536, 70000]) {
    const der = octetString(Buffer.alloc(n, 7));
    const back = readSingle(der, TAG.OCTET_STRING, 'test');
    assert.equal(back.value.length, n);
    assert.deepEqual(back.der, der);
  }
  assert.equal(hex(octetString(Buffer.alloc(128)).subarray(0, 3)), '048180');
  assert.equal(hex(octetString(Buffer.alloc(256)).subarray(0, 4)), '04820100');
  const cases: [string, RegExp][] = [
    ['', /truncated/],
    ['30', /truncated \(no length\)/],
    ['3004020101', /truncated \(element 0x30 needs 4 bytes, 3 left\)/],
    ['3080020101', /indefinite length/],
    ['308101' + '00', /non-minimal length/],
    ['30820001' + '00', /non-minimal length/],
    ['3084ffffffff', /truncated/],
    ['3085ffffffffff', /length too large/],
    ['30820a', /truncated \(length bytes\)/],
    ['30000500', /trailing data/],
    ['0400', /expected tag 0x30, found 0x04/],
  ];
  for (const [h, re] of cases) assert.throws(() => readSingle(Buffer.from(h, 'hex'), TAG.SEQUENCE, 'test'), re, h);
  assert.throws(() => new DERReader(Buffer.from('1f2201ff', 'hex'), 'test').read(), /high tag number/);
});

test('readers give slices of the input and walk constructed elements', () => {
  const inner = sequence(integer(5), utf8String('x'));
  const der = sequence(inner, tlv(0xa3, octetString(Buffer.from('hi'))));
  const top = contents(readSingle(der, TAG.SEQUENCE, 'top'), 'top');
  const first = top.expect(TAG.SEQUENCE, 'inner');
  assert.deepEqual(first.der, inner);
  assert.equal(first.der.buffer, der.buffer, 'a view, not a copy');
  assert.equal(top.optional(0xa0), undefined);
  const tagged = top.optional(0xa3);
  assert.ok(tagged);
  top.end();
  assert.throws(() => contents(readSingle(integer(1), TAG.INTEGER, 'i'), 'i'), /constructed/);
  const r = new DERReader(Buffer.alloc(0), 'empty');
  assert.ok(r.done);
  assert.throws(() => r.read(), /truncated/);
});

test('SET OF is sorted by encoding, as DER and Go require', () => {
  const a = sequence(oid('2.5.4.11'), utf8String('team'));
  const b = sequence(oid('2.5.4.11'), utf8String('ops'));
  assert.deepEqual(setOf([a, b]), setOf([b, a]));
  assert.equal(setOf([a, b]).indexOf(b), 2);
});
