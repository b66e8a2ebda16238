// ESLint flat config: type-aware typescript-eslint, zero warnings, and the
// import boundaries of DESIGN.md section 1 (gateway/, api/ and operator/ may
// import src/ but never each other; src/ imports none of them); support/
// (helpers shared by test/ and bench/) is imported by no production code.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const deployables = ['gateway', 'api', 'operator'];

/** Patterns forbidding imports of the given top-level folders from anywhere below. */
function forbid(folders, why) {
  return {
    patterns: folders.map((folder) => ({
      group: [`**/${folder}/*`, `../${folder}`, `../../${folder}`],
      message: why,
    })),
  };
}

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'data/', 'proto/gen/', 'charts/', '.tenantry-test/'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ['*.js', 'test/support/*.cjs'] }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[object.name='process'][property.name='env']",
          message: 'Read configuration through src/config only.',
        },
      ],
    },
  },
  {
    files: ['src/config/**', 'test/**', 'bench/**', 'support/**'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    files: ['src/**'],
    ignores: ['src/cli.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        forbid([...deployables, 'support'], 'src/ is shared code and must not import a deployable or the test and benchmark support/.'),
      ],
    },
  },
  ...deployables.map((own) => ({
    files: [`${own}/**`],
    rules: {
      'no-restricted-imports': [
        'error',
        forbid([...deployables.filter((d) => d !== own), 'support'], `${own}/ may import src/ only, never another deployable or support/.`),
      ],
    },
  })),
  {
    files: ['**/*.js', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', module: 'writable', process: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
