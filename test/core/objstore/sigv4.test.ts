// SigV4 held to AWS's worked example in its S3 documentation ("Example: GET Object": the
// first 10 bytes of test.txt from examplebucket on 2013-05-24, with AWS's example key pair),
// each documented step checked: the canonical request, the string to sign, the signature.
import { describe, expect, it } from 'vitest';
import {
  authorization,
  canonicalQuery,
  canonicalRequest,
  EMPTY_SHA256,
  type SignInput,
  signature,
  stringToSign,
} from '../../../services/core/objstore/sigv4.js';

const AWS_EXAMPLE_SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
const getObject: SignInput = {
  method: 'GET',
  path: '/test.txt',
  headers: {
    Host: 'examplebucket.s3.amazonaws.com',
    Range: 'bytes=0-9',
    'x-amz-content-sha256': EMPTY_SHA256,
    'x-amz-date': '20130524T000000Z',
  },
  payloadHash: EMPTY_SHA256,
  region: 'us-east-1',
  amzDate: '20130524T000000Z',
};

describe('SigV4 (AWS S3 documentation, Example: GET Object)', () => {
  it('makes the documented canonical request', () => {
    expect(canonicalRequest(getObject).request).toBe(
      [
        'GET',
        '/test.txt',
        '',
        'host:examplebucket.s3.amazonaws.com',
        'range:bytes=0-9',
        `x-amz-content-sha256:${EMPTY_SHA256}`,
        'x-amz-date:20130524T000000Z',
        '',
        'host;range;x-amz-content-sha256;x-amz-date',
        EMPTY_SHA256,
      ].join('\n'),
    );
  });

  it('makes the documented string to sign and signature', () => {
    expect(stringToSign(getObject)).toBe(
      'AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972',
    );
    expect(signature(getObject, AWS_EXAMPLE_SECRET)).toBe(
      'f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41',
    );
    expect(
      authorization(getObject, { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: AWS_EXAMPLE_SECRET }),
    ).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41',
    );
  });

  it('sorts and encodes the query as RFC 3986 wants', () => {
    expect(canonicalQuery({ b: 'x y', a: "it's*", 'max-keys': '2' })).toBe('a=it%27s%2A&b=x%20y&max-keys=2');
  });
});
