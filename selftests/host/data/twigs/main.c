/* SPDX-License-Identifier: MIT */
void twig(int i);

int main(void)
{
	int i;

	for (i = 0; i < 300; i++)
		twig(i);
	return 0;
}
