export * from './types.ts';
export { compile, compileRoute, pathSegments, routeMatches, type Engine } from './engine.ts';
export { compileCondition, conditionProblem, rulesProblem, VALUE_SHAPES, toTime } from './conditions.ts';
export { parseDecisionRequest, DECISION_PATHS, ROUTE_METHODS, type InputError, type Parsed } from './input.ts';
