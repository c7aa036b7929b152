"""The context pack: seeds, retrieval, windows and the instruction layers written for the agent."""
