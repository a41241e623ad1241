// Two commands for the interop tests, loaded into the real pi 1.x with -e: its rpc mode has no
// command to label an entry or to move in the tree, its extension API has both.
//   /itest-label TEXT  labels the last assistant reply of the current branch
//   /itest-goto ID     moves to entry ID, summarising the branch left behind
export default function (pi) {
	pi.registerCommand("itest-label", {
		description: "Label the last assistant reply (interop tests)",
		handler: async (args, ctx) => {
			const replies = ctx.sessionManager
				.getBranch()
				.filter((entry) => entry.type === "message" && entry.message.role === "assistant");
			pi.setLabel(replies[replies.length - 1].id, args.trim());
		},
	});
	pi.registerCommand("itest-goto", {
		description: "Move in the tree with a summary of the branch left (interop tests)",
		handler: async (args, ctx) => {
			await ctx.waitForIdle();
			const result = await ctx.navigateTree(args.trim(), { summarize: true });
			if (result.cancelled) throw new Error("itest-goto: navigation cancelled");
		},
	});
}
