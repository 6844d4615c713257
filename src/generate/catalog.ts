// Static vocabulary of the data generator: providers, resource types, regions, names, packages and weaknesses.
// Kept apart from generator.ts so the logic there reads as logic; nothing in this file is random. The tables keep one
// entry per line as written (prettier-ignore): they are data.

export type Provider = 'AWS' | 'Azure' | 'GCP' | 'Kubernetes';
export const PROVIDERS: readonly Provider[] = ['AWS', 'Azure', 'GCP', 'Kubernetes'];

/** Share of a tenant's assets per provider, among the providers it has integrations for. */
export const PROVIDER_WEIGHTS: Readonly<Record<Provider, number>> = { AWS: 45, Azure: 20, GCP: 15, Kubernetes: 20 };

/** What a resource is, which decides its rawData, its findings and the risks raised on it. */
export type Category =
  'vm' | 'task' | 'function' | 'pod' | 'workload' | 'bucket' | 'database' | 'identity' | 'network' | 'cluster';

/** The package ecosystems a scanner reports; a pool of vulnerabilities is generated per ecosystem. */
export type Ecosystem = 'deb' | 'apk' | 'npm' | 'jar' | 'python-pkg';
export const ECOSYSTEMS: readonly Ecosystem[] = ['deb', 'apk', 'npm', 'jar', 'python-pkg'];

export interface AssetKind {
  provider: Provider;
  /** Service segment, e.g. EC2 in AWS::EC2::Instance. */
  service: string;
  /** Last segment, e.g. Instance. */
  resource: string;
  /** Relative frequency within its provider. */
  weight: number;
  category: Category;
  /** Relative rate of vulnerability findings (0: never scanned for packages, e.g. buckets). */
  findingsWeight: number;
  /** Language ecosystems whose packages may be installed on it (OS packages follow from its operating system). */
  languages: readonly Ecosystem[];
  /** Resource types that live in no region (IAM); their region is `global`. */
  global?: boolean;
}

const kind = (
  provider: Provider,
  service: string,
  resource: string,
  weight: number,
  category: Category,
  findingsWeight: number,
  languages: readonly Ecosystem[] = [],
  global = false,
): AssetKind => ({
  provider,
  service,
  resource,
  weight,
  category,
  findingsWeight,
  languages,
  ...(global ? { global } : {}),
});

// prettier-ignore
export const ASSET_KINDS: readonly AssetKind[] = [
  kind('AWS', 'EC2', 'Instance', 18, 'vm', 2.2, ['jar', 'python-pkg']),
  kind('AWS', 'S3', 'Bucket', 9, 'bucket', 0),
  kind('AWS', 'Lambda', 'Function', 10, 'function', 0.8, ['npm', 'python-pkg']),
  kind('AWS', 'ECS', 'TaskDefinition', 6, 'task', 2.5, ['npm', 'jar', 'python-pkg']),
  kind('AWS', 'RDS', 'DBInstance', 3, 'database', 0),
  kind('AWS', 'IAM', 'Role', 8, 'identity', 0, [], true),
  kind('AWS', 'EC2', 'SecurityGroup', 6, 'network', 0),
  kind('AWS', 'DynamoDB', 'Table', 2, 'database', 0),
  kind('AWS', 'EKS', 'Cluster', 1, 'cluster', 0),
  kind('Azure', 'Compute', 'VirtualMachine', 8, 'vm', 2, ['jar', 'python-pkg']),
  kind('Azure', 'Storage', 'StorageAccount', 4, 'bucket', 0),
  kind('Azure', 'Web', 'Site', 3, 'function', 1, ['npm', 'python-pkg']),
  kind('Azure', 'Sql', 'Server', 1, 'database', 0),
  kind('Azure', 'Network', 'NetworkSecurityGroup', 2, 'network', 0),
  kind('Azure', 'KeyVault', 'Vault', 1, 'identity', 0),
  kind('GCP', 'Compute', 'Instance', 8, 'vm', 2, ['jar', 'python-pkg']),
  kind('GCP', 'Storage', 'Bucket', 4, 'bucket', 0),
  kind('GCP', 'Run', 'Service', 2, 'task', 1.8, ['npm', 'python-pkg']),
  kind('GCP', 'CloudFunctions', 'Function', 2, 'function', 0.8, ['npm', 'python-pkg']),
  kind('GCP', 'SQL', 'Instance', 1, 'database', 0),
  kind('GCP', 'IAM', 'ServiceAccount', 2, 'identity', 0, [], true),
  kind('Kubernetes', 'Core', 'Pod', 14, 'pod', 2.4, ['npm', 'jar', 'python-pkg']),
  kind('Kubernetes', 'Apps', 'Deployment', 5, 'workload', 1.6, ['npm', 'jar', 'python-pkg']),
  kind('Kubernetes', 'Apps', 'DaemonSet', 1, 'workload', 1.2, ['python-pkg']),
  kind('Kubernetes', 'Core', 'Service', 3, 'network', 0),
  kind('Kubernetes', 'Core', 'Namespace', 1, 'cluster', 0),
  kind('Kubernetes', 'RBAC', 'ClusterRoleBinding', 1, 'identity', 0),
];

// prettier-ignore
export const REGIONS: Readonly<Record<Provider, readonly string[]>> = {
  AWS: ['us-east-1', 'us-east-2', 'us-west-2', 'eu-west-1', 'eu-central-1', 'ap-southeast-2', 'ap-northeast-1'],
  Azure: ['eastus', 'eastus2', 'westeurope', 'northeurope', 'uksouth', 'westus2'],
  GCP: ['us-central1', 'us-east1', 'europe-west1', 'europe-west4', 'asia-southeast1'],
  // A cluster lives in some cloud's region; these are the usual homes of managed clusters.
  Kubernetes: ['us-east-1', 'eu-west-1', 'westeurope', 'us-central1', 'europe-west4'],
};

export const SCHEMA_VERSIONS: readonly string[] = ['2024-06-01', '2024-06-01', '2024-06-01', '2025-01-15'];

// prettier-ignore
export const TENANT_NAMES: readonly string[] = [
  'Acme Corporation', 'Globex', 'Initech', 'Umbrella Health', 'Stark Logistics', 'Wayne Financial', 'Hooli',
  'Soylent Foods', 'Tyrell Systems', 'Cyberdyne Robotics', 'Wonka Confectionery', 'Oscorp Labs', 'Massive Dynamic',
  'Vandelay Industries', 'Pied Piper', 'Gringotts Bank', 'Nakatomi Trading', 'Aperture Science',
];

/** Applications whose resources fill an inventory; combined with components to make names. */
// prettier-ignore
export const APPS: readonly string[] = [
  'payments', 'checkout', 'orders', 'inventory', 'auth', 'identity', 'search', 'notifications', 'billing',
  'reporting', 'analytics', 'ingest', 'gateway', 'catalog', 'recommendations', 'fraud', 'ledger', 'shipping',
  'users', 'media', 'pricing', 'support', 'audit', 'scheduler', 'export',
];
// prettier-ignore
export const COMPONENTS: readonly string[] = ['api', 'worker', 'web', 'consumer', 'cron', 'etl', 'proxy', 'sync', 'admin'];
// prettier-ignore
export const TEAMS: readonly string[] = ['platform', 'payments', 'data', 'growth', 'identity', 'sre', 'security', 'core-services'];
// prettier-ignore
export const BUCKET_PURPOSES: readonly string[] = ['logs', 'artifacts', 'backups', 'exports', 'uploads', 'static-assets', 'terraform-state', 'datalake'];

export interface OsRelease {
  /** Ecosystem of its packages; null for Windows, whose patches are not package findings. */
  ecosystem: 'deb' | 'apk' | null;
  /** targetType reported for its packages. */
  targetType: string;
  name: string;
  version: string;
  versionId: number;
  platform: 'linux' | 'windows';
  kernels: readonly string[];
  buildNumber: string | null;
  lcuVersion: string | null;
}

// prettier-ignore
export const VM_RELEASES: readonly (readonly [OsRelease, number])[] = [
  [{ ecosystem: 'deb', targetType: 'ubuntu', name: 'Ubuntu', version: '22.04', versionId: 22.04, platform: 'linux',
    kernels: ['5.15.0-1051-aws', '5.15.0-1063-azure', '6.5.0-1020-gcp'], buildNumber: null, lcuVersion: null }, 35],
  [{ ecosystem: 'deb', targetType: 'ubuntu', name: 'Ubuntu', version: '20.04', versionId: 20.04, platform: 'linux',
    kernels: ['5.4.0-1103-aws', '5.15.0-1057-azure'], buildNumber: null, lcuVersion: null }, 15],
  [{ ecosystem: 'deb', targetType: 'debian', name: 'Debian GNU/Linux', version: '12', versionId: 12, platform: 'linux',
    kernels: ['6.1.0-18-cloud-amd64', '6.1.0-21-cloud-arm64'], buildNumber: null, lcuVersion: null }, 25],
  [{ ecosystem: 'deb', targetType: 'debian', name: 'Debian GNU/Linux', version: '11', versionId: 11, platform: 'linux',
    kernels: ['5.10.0-28-cloud-amd64'], buildNumber: null, lcuVersion: null }, 10],
  [{ ecosystem: null, targetType: 'windows', name: 'Windows Server 2022 Datacenter', version: '10.0.20348', versionId: 20348,
    platform: 'windows', kernels: [], buildNumber: '20348.2340', lcuVersion: '2024-03' }, 10],
  [{ ecosystem: null, targetType: 'windows', name: 'Windows Server 2019 Datacenter', version: '10.0.17763', versionId: 17763,
    platform: 'windows', kernels: [], buildNumber: '17763.5576', lcuVersion: '2024-02' }, 5],
];

/** Base images of containers: what the OS packages of a task, pod or function come from. */
// prettier-ignore
export const CONTAINER_RELEASES: readonly (readonly [OsRelease, number])[] = [
  [{ ecosystem: 'apk', targetType: 'alpine', name: 'Alpine Linux', version: '3.19.1', versionId: 3.19, platform: 'linux',
    kernels: [], buildNumber: null, lcuVersion: null }, 40],
  [{ ecosystem: 'apk', targetType: 'alpine', name: 'Alpine Linux', version: '3.18.6', versionId: 3.18, platform: 'linux',
    kernels: [], buildNumber: null, lcuVersion: null }, 15],
  [{ ecosystem: 'deb', targetType: 'debian', name: 'Debian GNU/Linux', version: '12.5', versionId: 12, platform: 'linux',
    kernels: [], buildNumber: null, lcuVersion: null }, 35],
  [{ ecosystem: 'deb', targetType: 'debian', name: 'Debian GNU/Linux', version: '11.9', versionId: 11, platform: 'linux',
    kernels: [], buildNumber: null, lcuVersion: null }, 10],
];

export interface PackageSpec {
  name: string;
  /** Other packages built from the same source, reported alongside (libssl3 with openssl). */
  companions: readonly string[];
  /** [installed, fixed] version pairs seen in the field. */
  versions: readonly (readonly [string, string])[];
  /** Words used in generated titles (a function or feature of the package). */
  areas: readonly string[];
  vendor: string;
}

const pkg = (
  name: string,
  vendor: string,
  companions: readonly string[],
  versions: readonly (readonly [string, string])[],
  areas: readonly string[],
): PackageSpec => ({ name, vendor, companions, versions, areas });

// prettier-ignore
export const PACKAGES: Readonly<Record<Ecosystem, readonly PackageSpec[]>> = {
  deb: [
    pkg('openssl', 'OpenSSL', ['libssl3'], [['3.0.11-1~deb12u2', '3.0.13-1~deb12u1'], ['1.1.1w-0+deb11u1', '1.1.1w-0+deb11u2']], ['X.509 certificate verification', 'the TLS handshake', 'PKCS12 parsing']),
    pkg('libcurl', 'curl', ['curl'], [['7.88.1-10+deb12u5', '7.88.1-10+deb12u6'], ['7.74.0-1.3+deb11u11', '7.74.0-1.3+deb11u12']], ['SOCKS5 proxy handshake', 'cookie handling', 'HTTP/2 stream handling']),
    pkg('glibc', 'GNU', ['libc6', 'libc-bin'], [['2.36-9+deb12u3', '2.36-9+deb12u4'], ['2.31-13+deb11u7', '2.31-13+deb11u8']], ['the dynamic loader', 'iconv', 'getaddrinfo']),
    pkg('zlib', 'zlib', ['zlib1g'], [['1:1.2.13.dfsg-1', '1:1.2.13.dfsg-1+deb12u1'], ['1:1.2.11.dfsg-2+deb11u2', '1:1.2.11.dfsg-2+deb11u3']], ['inflate', 'deflate window handling']),
    pkg('xz-utils', 'Tukaani', ['liblzma5'], [['5.4.1-0.2', '5.4.1-1']], ['the LZMA decoder']),
    pkg('systemd', 'systemd', ['libsystemd0', 'libudev1'], [['252.22-1~deb12u1', '252.26-1~deb12u2']], ['systemd-resolved', 'journald']),
    pkg('sudo', 'sudo project', [], [['1.9.13p3-1+deb12u1', '1.9.13p3-1+deb12u2']], ['sudoedit', 'the command-line parser']),
    pkg('openssh', 'OpenBSD', ['openssh-client', 'openssh-server'], [['1:9.2p1-2+deb12u2', '1:9.2p1-2+deb12u3']], ['the signal handler of sshd', 'agent forwarding']),
    pkg('libxml2', 'xmlsoft', [], [['2.9.14+dfsg-1.3~deb12u1', '2.9.14+dfsg-1.3~deb12u2']], ['the XML reader', 'xmlSchemaValidate']),
    pkg('expat', 'libexpat', ['libexpat1'], [['2.5.0-1', '2.5.0-1+deb12u1']], ['XML_ResumeParser', 'attribute parsing']),
    pkg('ncurses', 'GNU', ['libncursesw6', 'libtinfo6'], [['6.4-4', '6.4-4+deb12u1']], ['terminfo parsing']),
    pkg('gnutls28', 'GnuTLS', ['libgnutls30'], [['3.7.9-2+deb12u1', '3.7.9-2+deb12u2']], ['RSA-PSK key exchange', 'certificate chain verification']),
    pkg('krb5', 'MIT', ['libkrb5-3', 'libgssapi-krb5-2'], [['1.20.1-2+deb12u1', '1.20.1-2+deb12u2']], ['the GSS message token handling']),
    pkg('tar', 'GNU', [], [['1.34+dfsg-1.2', '1.34+dfsg-1.2+deb12u1']], ['archive header parsing']),
  ],
  apk: [
    pkg('openssl', 'OpenSSL', ['libssl3', 'libcrypto3'], [['3.1.4-r5', '3.1.6-r0'], ['3.1.4-r1', '3.1.4-r3']], ['X.509 certificate verification', 'the TLS handshake', 'PKCS12 parsing']),
    pkg('libcurl', 'curl', ['curl'], [['8.5.0-r0', '8.9.0-r0'], ['8.4.0-r0', '8.5.0-r0']], ['SOCKS5 proxy handshake', 'cookie handling']),
    pkg('musl', 'musl', ['musl-utils'], [['1.2.4-r2', '1.2.4-r3']], ['iconv', 'the resolver']),
    pkg('zlib', 'zlib', [], [['1.3-r2', '1.3.1-r0']], ['inflate']),
    pkg('busybox', 'BusyBox', ['ssl_client', 'busybox-binsh'], [['1.36.1-r15', '1.36.1-r16']], ['awk', 'the hush shell']),
    pkg('expat', 'libexpat', [], [['2.5.0-r2', '2.6.0-r0']], ['XML_ResumeParser']),
    pkg('libxml2', 'xmlsoft', [], [['2.11.6-r0', '2.11.7-r0']], ['the XML reader']),
    pkg('c-ares', 'c-ares', [], [['1.24.0-r0', '1.27.0-r0']], ['the DNS response parser']),
  ],
  npm: [
    pkg('lodash', 'lodash', [], [['4.17.15', '4.17.21'], ['4.17.19', '4.17.21']], ['template', 'zipObjectDeep']),
    pkg('axios', 'axios', [], [['0.21.1', '0.21.2'], ['1.5.1', '1.6.0']], ['redirect handling', 'the XSRF token']),
    pkg('express', 'OpenJS Foundation', [], [['4.17.1', '4.19.2']], ['res.redirect', 'query parsing']),
    pkg('minimist', 'minimist', [], [['1.2.5', '1.2.6']], ['argument parsing']),
    pkg('jsonwebtoken', 'auth0', [], [['8.5.1', '9.0.0']], ['key type validation']),
    pkg('semver', 'npm', [], [['5.7.1', '5.7.2'], ['7.5.1', '7.5.2']], ['range parsing']),
    pkg('ws', 'websockets', [], [['7.4.5', '7.5.10'], ['8.11.0', '8.17.1']], ['header handling']),
    pkg('qs', 'ljharb', [], [['6.5.2', '6.5.3']], ['array parsing']),
    pkg('follow-redirects', 'follow-redirects', [], [['1.14.8', '1.15.4']], ['URL parsing']),
    pkg('path-to-regexp', 'pillarjs', [], [['0.1.7', '0.1.10']], ['route matching']),
    pkg('tough-cookie', 'salesforce', [], [['4.0.0', '4.1.3']], ['cookie jar handling']),
  ],
  jar: [
    pkg('log4j-core', 'Apache', [], [['2.14.1', '2.17.1'], ['2.16.0', '2.17.1']], ['JNDI lookups', 'the pattern layout']),
    pkg('jackson-databind', 'FasterXML', [], [['2.12.3', '2.12.7.1'], ['2.13.2', '2.13.4.2']], ['polymorphic deserialization', 'deeply nested arrays']),
    pkg('spring-web', 'VMware', [], [['5.3.18', '5.3.32'], ['6.0.10', '6.0.17']], ['URL parsing', 'data binding']),
    pkg('snakeyaml', 'SnakeYAML', [], [['1.30', '2.0'], ['1.33', '2.0']], ['the Constructor class']),
    pkg('netty-codec-http2', 'Netty', [], [['4.1.94.Final', '4.1.100.Final']], ['HTTP/2 stream resets']),
    pkg('protobuf-java', 'Google', [], [['3.21.7', '3.21.12']], ['message parsing']),
    pkg('commons-text', 'Apache', [], [['1.9', '1.10.0']], ['variable interpolation']),
    pkg('logback-classic', 'QOS.ch', [], [['1.2.11', '1.2.13']], ['the receiver component']),
  ],
  'python-pkg': [
    pkg('urllib3', 'urllib3', [], [['1.26.5', '1.26.18'], ['2.0.6', '2.0.7']], ['the Cookie header on redirects', 'request body handling']),
    pkg('requests', 'psf', [], [['2.25.1', '2.31.0']], ['Proxy-Authorization headers']),
    pkg('cryptography', 'pyca', [], [['39.0.1', '41.0.6'], ['41.0.3', '42.0.4']], ['PKCS12 loading', 'RSA decryption']),
    pkg('jinja2', 'Pallets', [], [['3.1.2', '3.1.4']], ['the xmlattr filter']),
    pkg('pyyaml', 'PyYAML', [], [['5.3.1', '5.4']], ['full_load']),
    pkg('setuptools', 'pypa', [], [['58.1.0', '65.5.1']], ['package_index']),
    pkg('certifi', 'certifi', [], [['2022.9.24', '2023.7.22']], ['the root store']),
    pkg('werkzeug', 'Pallets', [], [['2.2.2', '2.2.3'], ['2.3.6', '3.0.1']], ['multipart parsing', 'the debugger']),
    pkg('django', 'Django', [], [['3.2.18', '3.2.25'], ['4.2.4', '4.2.11']], ['the admin', 'Truncator']),
    pkg('pillow', 'python-pillow', [], [['9.5.0', '10.0.1']], ['ImageFont', 'the libwebp binding']),
  ],
};

/** How scanners describe a package location, per ecosystem. */
// prettier-ignore
export const LANGUAGE_TARGETS: Readonly<Record<'npm' | 'jar' | 'python-pkg', string>> = {
  npm: 'Node.js', jar: 'Java', 'python-pkg': 'Python',
};

// prettier-ignore
export const SEVERITY_SOURCES: Readonly<Record<Ecosystem, readonly string[]>> = {
  deb: ['debian', 'ubuntu', 'nvd'],
  apk: ['nvd', 'alpine'],
  npm: ['ghsa', 'nvd'],
  jar: ['ghsa', 'nvd'],
  'python-pkg': ['ghsa', 'nvd'],
};

export interface Cwe {
  id: string;
  name: string;
  description: string;
}

// prettier-ignore
export const CWES: readonly Cwe[] = [
  { id: '787', name: 'Out-of-bounds Write', description: 'The product writes data past the end, or before the beginning, of the intended buffer.' },
  { id: '125', name: 'Out-of-bounds Read', description: 'The product reads data past the end, or before the beginning, of the intended buffer.' },
  { id: '20', name: 'Improper Input Validation', description: 'The product receives input or data, but it does not validate or incorrectly validates that the input has the properties that are required to process the data safely and correctly.' },
  { id: '79', name: "Improper Neutralization of Input During Web Page Generation ('Cross-site Scripting')", description: 'The product does not neutralize or incorrectly neutralizes user-controllable input before it is placed in output that is used as a web page.' },
  { id: '416', name: 'Use After Free', description: 'The product reuses or references memory after it has been freed.' },
  { id: '22', name: "Improper Limitation of a Pathname to a Restricted Directory ('Path Traversal')", description: 'The product uses external input to construct a pathname without neutralizing special elements that can resolve outside the restricted directory.' },
  { id: '400', name: 'Uncontrolled Resource Consumption', description: 'The product does not properly control the allocation and maintenance of a limited resource.' },
  { id: '502', name: 'Deserialization of Untrusted Data', description: 'The product deserializes untrusted data without sufficiently ensuring that the resulting data will be valid.' },
  { id: '94', name: "Improper Control of Generation of Code ('Code Injection')", description: 'The product constructs all or part of a code segment using externally-influenced input.' },
  { id: '190', name: 'Integer Overflow or Wraparound', description: 'The product performs a calculation that can produce an integer overflow or wraparound.' },
  { id: '476', name: 'NULL Pointer Dereference', description: 'The product dereferences a pointer that it expects to be valid but is NULL.' },
  { id: '1321', name: "Improperly Controlled Modification of Object Prototype Attributes ('Prototype Pollution')", description: 'The product receives input that specifies attributes to be initialized or updated in an object, but it does not properly control modifications of attributes of the object prototype.' },
  { id: '918', name: 'Server-Side Request Forgery (SSRF)', description: 'The web server receives a URL from an upstream component and retrieves its contents without ensuring that the request is sent to the expected destination.' },
  { id: '295', name: 'Improper Certificate Validation', description: 'The product does not validate, or incorrectly validates, a certificate.' },
  { id: '770', name: 'Allocation of Resources Without Limits or Throttling', description: 'The product allocates a reusable resource without imposing any restrictions on its size or number.' },
  { id: '200', name: 'Exposure of Sensitive Information to an Unauthorized Actor', description: 'The product exposes sensitive information to an actor that is not explicitly authorized to have access to that information.' },
  { id: '917', name: "Improper Neutralization of Special Elements used in an Expression Language Statement ('Expression Language Injection')", description: 'The product constructs an expression language statement using externally-influenced input.' },
];

/** Weakness phrases for generated titles, keyed by CWE id. */
// prettier-ignore
export const WEAKNESS_PHRASES: Readonly<Record<string, string>> = {
  '787': 'heap-based buffer overflow', '125': 'out-of-bounds read', '20': 'improper input validation',
  '79': 'cross-site scripting', '416': 'use-after-free', '22': 'path traversal', '400': 'denial of service',
  '502': 'unsafe deserialization', '94': 'code injection', '190': 'integer overflow', '476': 'NULL pointer dereference',
  '1321': 'prototype pollution', '918': 'server-side request forgery', '295': 'improper certificate validation',
  '770': 'unbounded memory allocation', '200': 'information disclosure', '917': 'expression language injection',
};

/**
 * A few real, well-known vulnerabilities, so a generated inventory has recognisable entries. Their data is summarised
 * from public advisories; the rest of the pool is synthetic.
 */
export interface FamousCve {
  id: string;
  ecosystem: Ecosystem;
  packageName: string;
  severity: 'CRITICAL' | 'HIGH' | 'MEDIUM';
  published: string;
  title: string;
  cwe: string;
  kev: { dateAdded: string; dueDate: string; vendorProject: string; product: string; vulnerabilityName: string } | null;
}

// prettier-ignore
export const FAMOUS_CVES: readonly FamousCve[] = [
  { id: 'CVE-2021-44228', ecosystem: 'jar', packageName: 'log4j-core', severity: 'CRITICAL', published: '2021-12-10',
    title: 'log4j-core: Remote code execution in Log4j 2.x when logs contain an attacker-controlled string value', cwe: '917',
    kev: { dateAdded: '2021-12-10', dueDate: '2021-12-24', vendorProject: 'Apache', product: 'Log4j2', vulnerabilityName: 'Apache Log4j2 Remote Code Execution Vulnerability' } },
  { id: 'CVE-2023-4911', ecosystem: 'deb', packageName: 'glibc', severity: 'HIGH', published: '2023-10-03',
    title: 'glibc: buffer overflow in ld.so leading to privilege escalation', cwe: '787',
    kev: { dateAdded: '2023-11-21', dueDate: '2023-12-12', vendorProject: 'GNU', product: 'GNU C Library', vulnerabilityName: 'GNU C Library Buffer Overflow Vulnerability' } },
  { id: 'CVE-2022-37434', ecosystem: 'deb', packageName: 'zlib', severity: 'CRITICAL', published: '2022-08-05',
    title: 'zlib: heap-based buffer over-read and overflow in inflate() via large gzip header extra field', cwe: '787', kev: null },
  { id: 'CVE-2023-38545', ecosystem: 'apk', packageName: 'libcurl', severity: 'CRITICAL', published: '2023-10-18',
    title: 'curl: heap based buffer overflow in the SOCKS5 proxy handshake', cwe: '787', kev: null },
  { id: 'CVE-2021-23337', ecosystem: 'npm', packageName: 'lodash', severity: 'HIGH', published: '2021-02-15',
    title: 'nodejs-lodash: command injection via template', cwe: '94', kev: null },
  { id: 'CVE-2020-36518', ecosystem: 'jar', packageName: 'jackson-databind', severity: 'HIGH', published: '2022-03-11',
    title: 'jackson-databind: denial of service via a large depth of nested objects', cwe: '787', kev: null },
  { id: 'CVE-2023-43804', ecosystem: 'python-pkg', packageName: 'urllib3', severity: 'MEDIUM', published: '2023-10-04',
    title: 'python-urllib3: Cookie request header is not stripped during cross-origin redirects', cwe: '200', kev: null },
];

// prettier-ignore
export const EXPLOIT_SOURCES: readonly (readonly [string, string])[] = [
  ['Exploit-DB', 'https://www.exploit-db.com/exploits/'],
  ['GitHub', 'https://github.com/'],
  ['Metasploit', 'https://www.rapid7.com/db/modules/'],
  ['PacketStorm', 'https://packetstormsecurity.com/files/'],
];

// prettier-ignore
export const SECRET_TYPES: readonly (readonly [string, readonly string[]])[] = [
  ['aws-access-key-id', ['/app/.env', '/home/ubuntu/.aws/credentials', '/srv/app/config/settings.py']],
  ['github-personal-access-token', ['/root/.git-credentials', '/app/.npmrc', '/workspace/scripts/release.sh']],
  ['private-key', ['/etc/ssl/private/server.key', '/home/deploy/.ssh/id_rsa', '/app/certs/client.pem']],
  ['slack-webhook-url', ['/app/config/alerts.yaml', '/opt/jobs/notify.py']],
  ['stripe-secret-key', ['/app/.env.production', '/srv/payments/config.json']],
  ['generic-api-key', ['/app/config/default.json', '/etc/app/app.conf', '/usr/src/app/src/config.ts']],
  ['database-connection-string', ['/app/appsettings.json', '/srv/app/.env', '/opt/app/application.properties']],
];

export interface RiskType {
  id: string;
  categories: readonly Category[];
  title: string;
  resolutions: readonly (readonly [string, string])[];
  factors: readonly string[];
}

// prettier-ignore
export const RISK_TYPES: readonly RiskType[] = [
  { id: 'exposed-workload-with-critical-vulnerabilities', categories: ['vm', 'pod', 'task', 'workload'],
    title: 'Internet-exposed workload runs software with critical vulnerabilities',
    resolutions: [['patch-packages', 'Update the vulnerable packages to a fixed version'], ['restrict-ingress', 'Restrict inbound access to known networks']],
    factors: ['internet-exposure', 'critical-vulnerability', 'known-exploit'] },
  { id: 'public-storage', categories: ['bucket'], title: 'Storage allows anonymous public read access',
    resolutions: [['block-public-access', 'Enable public access blocking'], ['review-policy', 'Remove public principals from the access policy']],
    factors: ['public-access', 'sensitive-data'] },
  { id: 'over-privileged-identity', categories: ['identity'], title: 'Identity holds administrative privileges it does not use',
    resolutions: [['least-privilege', 'Replace the attached policies with a least-privilege policy'], ['remove-wildcards', 'Remove wildcard actions']],
    factors: ['admin-privileges', 'unused-permissions', 'privilege-escalation'] },
  { id: 'function-without-authorizer', categories: ['function'], title: 'Function is reachable from the internet without an authorizer',
    resolutions: [['add-authorizer', 'Require an authorizer on the endpoint'], ['private-endpoint', 'Expose the function through a private endpoint only']],
    factors: ['internet-exposure', 'missing-authentication'] },
  { id: 'privileged-container', categories: ['pod', 'workload', 'task'], title: 'Container runs privileged with host access',
    resolutions: [['drop-privileged', 'Run the container without privileged mode'], ['pod-security', 'Enforce the restricted Pod Security Standard']],
    factors: ['privileged-mode', 'host-path-mount'] },
  { id: 'database-publicly-accessible', categories: ['database'], title: 'Database accepts connections from the internet',
    resolutions: [['private-subnet', 'Move the database into private subnets'], ['restrict-firewall', 'Restrict the firewall to application subnets']],
    factors: ['internet-exposure', 'sensitive-data'] },
  { id: 'exposed-secret', categories: ['vm', 'task', 'pod', 'function'], title: 'Cloud credentials are stored in plain text on the workload',
    resolutions: [['rotate-secret', 'Rotate the exposed credential'], ['secret-manager', 'Load the credential from a secret manager']],
    factors: ['plaintext-secret', 'lateral-movement'] },
  { id: 'open-management-ports', categories: ['network', 'vm'], title: 'Management ports are open to 0.0.0.0/0',
    resolutions: [['restrict-ssh', 'Limit SSH and RDP to a bastion or VPN range'], ['use-session-manager', 'Use a session manager instead of open ports']],
    factors: ['internet-exposure', 'management-port'] },
  { id: 'cluster-admin-binding', categories: ['identity', 'cluster'], title: 'Cluster-admin is bound to a broad group or service account',
    resolutions: [['scope-binding', 'Bind a namespaced role instead of cluster-admin']],
    factors: ['admin-privileges', 'broad-subject'] },
];

// prettier-ignore
export const FACTOR_TITLES: Readonly<Record<string, string>> = {
  'internet-exposure': 'Reachable from the internet',
  'critical-vulnerability': 'Has a critical vulnerability',
  'known-exploit': 'A public exploit exists',
  'public-access': 'Anonymous access allowed',
  'sensitive-data': 'Holds sensitive data',
  'admin-privileges': 'Administrative privileges',
  'unused-permissions': 'Permissions unused for 90 days',
  'privilege-escalation': 'Privilege escalation path',
  'missing-authentication': 'No authentication in front',
  'privileged-mode': 'Privileged container',
  'host-path-mount': 'Mounts a host path',
  'plaintext-secret': 'Plain-text secret',
  'lateral-movement': 'Enables lateral movement',
  'management-port': 'Management port open',
  'broad-subject': 'Broad subject',
};
